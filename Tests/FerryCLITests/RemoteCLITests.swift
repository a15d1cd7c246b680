import FerryKit
import FerryTestSupport
import Foundation
import Testing

/// `ferry remote` and `ferry serve --listen` with the real binary: the setting kept for every
/// start, the URLs and fingerprints, and a QR code a reader (zbarimg) decodes to the URL.
@Suite(.serialized) struct RemoteCLITests {
    @Test func remoteIsEnabledShownAsAQRCodeAndDisabled() async throws {
        try await CommandRunner.withHome { home in
            func ferry(_ arguments: String...) async throws -> CommandRunner.Output {
                try await CommandRunner.ferry(arguments, home: home)
            }
            let bad = try await ferry("serve", "--listen", "http://0.0.0.0:8080")
            #expect(bad.status != 0 && bad.stderr.contains("--trusted-proxy"), "\(bad)")
            let lonely = try await ferry("serve", "--server-name", "nas.local")
            #expect(lonely.status != 0 && lonely.stderr.contains("go with --listen"), "\(lonely)")
            let noWhere = try await ferry("remote", "enable")
            #expect(noWhere.status != 0 && noWhere.stderr.contains("--listen"), "\(noWhere)")

            let enable = try await ferry("remote", "enable", "--listen", "127.0.0.1:0")
            #expect(enable.status == 0 && enable.stdout.contains("next start"), "\(enable)")
            let serve = try await ferry("serve", "--detach", "--port", "0")
            #expect(serve.status == 0, "\(serve)")
            var status: RemoteStatus?
            try await eventually("the listener is bound") {
                let shown = try await ferry("remote", "--json")
                status = try? FerryJSON.decoder().decode(RemoteStatus.self, from: Data(shown.stdout.utf8))
                return status?.urls.isEmpty == false
            }
            let url = try #require(status?.urls.first)
            #expect(url.hasPrefix("https://127.0.0.1:") && status?.caFingerprint != nil && status?.certificateFingerprint != nil)

            let shown = try await ferry("remote")
            #expect(shown.stdout.contains(url) && shown.stdout.contains(status!.caFingerprint!), "\(shown)")
            #expect(try Self.decodeQR(shown.stdout, in: home) == url)
            let plain = try await ferry("remote", "--no-qr")
            #expect(!plain.stdout.contains("█"), "\(plain)")

            let disable = try await ferry("remote", "disable")
            #expect(disable.status == 0, "\(disable)")
            _ = try await ferry("stop")
            _ = try await ferry("serve", "--detach", "--port", "0")
            let off = try await ferry("remote")
            #expect(off.status != 0 && off.stderr.contains("loopback only"), "\(off)")
        }
    }

    /// The QR code's half blocks as an image (PBM), read by zbarimg.
    static func decodeQR(_ text: String, in folder: URL) throws -> String {
        let lines = text.split(separator: "\n").map(String.init).filter { $0.contains(where: { "█▀▄".contains($0) }) }
        let width = lines.map(\.count).max() ?? 0
        var rows: [[Bool]] = []
        for line in lines {
            let characters = Array(line.padding(toLength: width, withPad: " ", startingAt: 0))
            rows.append(characters.map { $0 == "█" || $0 == "▀" })
            rows.append(characters.map { $0 == "█" || $0 == "▄" })
        }
        let (scale, quiet) = (6, 4)
        var image = "P1\n\((width + 2 * quiet) * scale) \((rows.count + 2 * quiet) * scale)\n"
        for row in -quiet..<(rows.count + quiet) {
            let pixels = (-quiet..<(width + quiet)).flatMap { column -> [String] in
                let dark = rows.indices.contains(row) && (0..<width).contains(column) && rows[row][column]
                return Array(repeating: dark ? "1" : "0", count: scale)
            }.joined(separator: " ")
            for _ in 0..<scale { image += pixels + "\n" }
        }
        let file = folder.appendingPathComponent("qr.pbm")
        try image.write(to: file, atomically: true, encoding: .ascii)
        let result = try ChildProcess.capture("/usr/bin/zbarimg", arguments: ["-q", "--raw", file.path])
        guard result.status == 0 else { throw TestFailure("zbarimg read no code (\(result.status)): \(result.error)") }
        return result.output.trimmingCharacters(in: .whitespacesAndNewlines)
    }
}
