#if canImport(Glibc)
import Glibc
#endif
import Foundation

/// A QR code of a text, made by libqrencode (Debian's `libqrencode4`), loaded when first asked
/// for: Ferry builds and runs without it, and only `ferry remote` says it is missing.
struct QRCode {
    /// Modules, row by row; true is dark.
    let modules: [[Bool]]

    private typealias Encode = @convention(c) (UnsafePointer<CChar>, Int32, Int32, Int32, Int32) -> UnsafeMutableRawPointer?
    private typealias Free = @convention(c) (UnsafeMutableRawPointer?) -> Void

    /// libqrencode's two functions; nil when the library is not installed.
    private nonisolated(unsafe) static let library: (encode: Encode, free: Free)? = {
        guard let handle = dlopen("libqrencode.so.4", RTLD_NOW) ?? dlopen("libqrencode.so", RTLD_NOW),
            let encode = dlsym(handle, "QRcode_encodeString"), let free = dlsym(handle, "QRcode_free")
        else { return nil }
        return (unsafeBitCast(encode, to: Encode.self), unsafeBitCast(free, to: Free.self))
    }()

    static var isAvailable: Bool { library != nil }

    /// The smallest code for `text` at error correction level M; nil without libqrencode.
    init?(_ text: String) {
        // QR_ECLEVEL_M = 1, QR_MODE_8 = 2, case-sensitive.
        guard let library = Self.library, let code = text.withCString({ library.encode($0, 0, 1, 2, 1) }) else { return nil }
        defer { library.free(code) }
        // struct QRcode { int version; int width; unsigned char *data; }: bit 0 of each byte is dark.
        let width = Int(code.load(fromByteOffset: 4, as: Int32.self))
        guard width > 0, let data = code.load(fromByteOffset: 8, as: UnsafePointer<UInt8>?.self) else { return nil }
        modules = (0..<width).map { row in (0..<width).map { column in data[row * width + column] & 1 == 1 } }
    }

    /// Two rows a line with half blocks and a quiet zone of two modules. `ansi`: black on white
    /// whatever the terminal's colours; else dark modules are drawn (for a light background, or
    /// a program reading it).
    func text(ansi: Bool) -> String {
        let quiet = 2
        let width = modules.count + 2 * quiet
        func dark(_ row: Int, _ column: Int) -> Bool {
            let (r, c) = (row - quiet, column - quiet)
            return r >= 0 && c >= 0 && r < modules.count && c < modules.count && modules[r][c]
        }
        var lines: [String] = []
        for top in stride(from: 0, to: width, by: 2) {
            var line = ansi ? "\u{1B}[30;47m" : ""
            for column in 0..<width {
                switch (dark(top, column), dark(top + 1, column)) {
                case (true, true): line += "█"
                case (true, false): line += "▀"
                case (false, true): line += "▄"
                case (false, false): line += " "
                }
            }
            lines.append(line + (ansi ? "\u{1B}[0m" : ""))
        }
        return lines.joined(separator: "\n")
    }
}
