import FerryKit
import FerryTestSupport
import Foundation
import Testing

@testable import FerryCore

/// Ferry's Digest against a server it did not write (Debian's Apache with mod_auth_digest, its
/// password file made by htdigest), and the test origin's Digest against a client it did not
/// write (curl --digest): each side proven by the other's independent implementation.
@Suite struct ThirdPartyDigestTests {
    @Test(.enabled(if: ApacheServer.isInstalled, "apache2 and apache2-utils are not installed (scripts/test installs them as root)"))
    func apacheModAuthDigest() async throws {
        try await withTemporaryDirectory { home in
            let apache = try await ApacheServer(folder: home.appendingPathComponent("apache"), realm: "ferry apache", user: "Mufasa", password: "Circle of Life")
            let data = Origin.bytes(48_000_000)
            try data.write(to: apache.root.appendingPathComponent("file.bin"))
            chmod(apache.root.appendingPathComponent("file.bin").path, 0o644)
            // A file modified within the second gets a weak ETag from Apache, and If-Range with
            // its date is refused (RFC 9110 13.1.5): ranges would come back whole.
            try FileManager.default.setAttributes([.modificationDate: Date(timeIntervalSinceNow: -3600)], ofItemAtPath: apache.root.appendingPathComponent("file.bin").path)
            var configuration = TransferEngine.Configuration.fast
            configuration.segmentMinimumSplit = 256 * 1024
            try await EngineHarness.run(home: home.appendingPathComponent("ferry"), configuration: configuration) { h in
                let url = apache.base.appendingPathComponent("file.bin")
                let t = try await h.engine.enqueue(
                    .init(urls: [url], session: "test", options: TransferOptions(connections: 4, user: "Mufasa", password: "Circle of Life"))
                )[0]
                #expect(try await h.wait(t.id, for: .completed).sha256 == data.sha256Hex)
                let wrong = try await h.engine.enqueue(
                    .init(urls: [url], session: "other", options: TransferOptions(user: "Mufasa", password: "Circle of Lies"))
                )[0]
                try await eventually("the wrong password to fail") { try await h.engine.transfer(wrong.id).state.isFinal }
                let failed = try await h.engine.transfer(wrong.id)
                #expect(failed.state == .failed)
                #expect(failed.error?.message.contains("refused the user Mufasa's password for 127.0.0.1") == true, "\(failed.error?.message ?? "")")
            }
            await apache.stop()
            let lines = apache.accessLog.split(separator: "\n")
            let answered = lines.filter { ($0.contains(" 200 ") || $0.contains(" 206 ")) && $0.contains("Digest username") }
            let ranges = answered.filter { $0.contains(" 206 range=bytes=") }
            #expect(answered.allSatisfy { $0.contains("algorithm=MD5") && $0.contains(#"username=\"Mufasa\""#) })
            // The first download paid one 401; its ranges were answered (206) at once, with the
            // same nonce and each its own nc.
            #expect(ranges.count >= 2, "\(apache.accessLog)")
            #expect(lines.prefix(answered.count + 1).filter { $0.contains(" 401 ") }.count == 1, "\(apache.accessLog)")
            let counts = ranges.compactMap { line in line.range(of: "nc=").map { String(line[$0.upperBound...].prefix(8)) } }
            #expect(Set(counts).count == ranges.count && !counts.contains("00000001"), "\(counts)")
        }
    }

    @Test(arguments: [(OriginLogin.Scheme.digestMD5, "MD5"), (.digestSHA256, "SHA-256")])
    func curlAnswersTheOriginsDigest(_ scheme: OriginLogin.Scheme, _ algorithm: String) async throws {
        try await Origin.run { origin, base in
            let file = Origin.File(data: Origin.bytes(50_000))
            origin.serve("/f", file)
            origin.protect("/f", OriginLogin([scheme], user: "Mufasa", password: "Circle of Life"))
            try await withTemporaryDirectory { folder in
                let out = folder.appendingPathComponent("out").path
                let url = base.appendingPathComponent("f").absoluteString + "?q=1"
                let right = try await CommandRunner.run(
                    "/usr/bin/curl", ["-s", "--digest", "-u", "Mufasa:Circle of Life", "-o", out, "-w", "%{http_code}", url], environment: [:],
                    timeout: .seconds(30)
                )
                #expect(right.stdout == "200", "\(right)")
                #expect(FileManager.default.contents(atPath: out) == file.data)
                #expect(origin.requests(for: "/f").last?.authorization?.contains("algorithm=\(algorithm)") == true)
                let wrong = try await CommandRunner.run(
                    "/usr/bin/curl", ["-s", "--digest", "-u", "Mufasa:wrong", "-o", "/dev/null", "-w", "%{http_code}", url], environment: [:],
                    timeout: .seconds(30)
                )
                #expect(wrong.stdout == "401", "\(wrong)")
            }
        }
    }
}
