import FerryCore
import Foundation
import LibFuzzerDriver

/// Any text as a server- or feed-supplied file name: what FileNamer returns must be one safe
/// path component inside the library — no separator, no NUL or control character, no leading
/// dot, not `.` or `..`, at most `maxBytes` bytes (plus room for ` (n)`), never empty.
func fuzzFileNamer(_ input: UnsafeRawBufferPointer) -> CInt {
    let text = String(decoding: input, as: UTF8.self)
    if let name = FileNamer.sanitize(text) {
        check(name, limit: FileNamer.maxBytes)
        check(FileNamer.variant(of: name, number: 999), limit: 255)
    }
    let url = URL(string: "https://example.com/" + (text.addingPercentEncoding(withAllowedCharacters: .urlPathAllowed) ?? ""))
    check(FileNamer.name(contentDisposition: "attachment; filename=\"\(text)\"", url: url, suggested: text, contentType: text), limit: FileNamer.maxBytes)
    check(FileNamer.name(preferred: text, contentType: "audio/mpeg", url: url), limit: FileNamer.maxBytes)
    return 0
}

/// Bytes and scalars, not Characters: `contains("/")` and `hasPrefix(".")` compare Characters,
/// and miss a `/` or a dot that a mark joins into a larger one.
private func check(_ name: String, limit: Int) {
    precondition(!name.isEmpty, "empty name")
    precondition(name.utf8.first != 0x2E, "hidden or dot name \(name.debugDescription)")  // `.`
    precondition(!name.utf8.contains(0x2F) && !name.utf8.contains(0x5C), "separator in \(name.debugDescription)")  // `/` `\`
    precondition(!name.unicodeScalars.contains { $0.properties.generalCategory == .control }, "control character in \(name.debugDescription)")
    precondition(name.utf8.count <= limit, "\(name.utf8.count) bytes > \(limit): \(name.debugDescription)")
}

/// libFuzzer's entry points: the input callback, and the `main` that SwiftPM links in
/// (`FuzzFileNamer_main`), which runs libFuzzer's driver.
@_cdecl("LLVMFuzzerTestOneInput")
func testOneInput(_ data: UnsafePointer<UInt8>?, _ size: Int) -> CInt {
    fuzzFileNamer(UnsafeRawBufferPointer(start: data, count: size))
}

@_cdecl("FuzzFileNamer_main")
func fuzzMain(_ argc: CInt, _ argv: UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>?) -> CInt {
    var argc = argc
    var argv = argv
    return LLVMFuzzerRunDriver(&argc, &argv, testOneInput)
}
