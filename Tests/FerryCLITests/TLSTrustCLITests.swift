import FerryKit
import FerryTestSupport
import Foundation
import Testing

/// A server signed by an authority the system does not know (a company's, a home lab's): not
/// trusted by default, failing at once; trusted by `--ca-certificate`, by a session's
/// `--ca-directory`, by the daemon's `SSL_CERT_FILE`; a file that is no certificate refused
/// before anything is queued.
@Suite(.serialized) struct TLSTrustCLITests {
    @Test func anAuthorityTheSystemDoesNotKnowIsTrustedWhereTheUserSaysSo() async throws {
        try await Origin.run(tls: true) { origin, base in
            let files = (1...4).map { Origin.File(data: Origin.bytes(50_000, seed: UInt64($0))) }
            for (n, file) in files.enumerated() { origin.serve("/f\(n + 1)", file) }
            let authority = Origin.certificatesFolder().appendingPathComponent("localhost.crt")
            try await CommandRunner.withHome { home in
                func ferry(_ arguments: [String], environment: [String: String] = [:]) async throws -> CommandRunner.Output {
                    try await CommandRunner.ferry(arguments, home: home, extraEnvironment: environment)
                }
                func url(_ n: Int) -> String { base.appendingPathComponent("f\(n)").absoluteString }

                let untrusted = try await ferry(["get", url(1)])
                #expect(untrusted.status != 0, "\(untrusted)")
                let failed = try Self.transfers(try await ferry(["ls", "--all", "--json"]))
                #expect(failed.count == 1 && failed[0].state == .failed, "a certificate failure fails at once, no waiting: \(failed)")
                #expect(failed[0].attempts == 1, "\(failed)")

                let trusted = try await ferry(["get", "--ca-certificate", authority.path, url(2)])
                #expect(trusted.status == 0, "\(trusted)")

                let folder = home.appendingPathComponent("authorities")
                try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
                try FileManager.default.copyItem(at: authority, to: folder.appendingPathComponent("lab.pem"))
                try Data("not a certificate".utf8).write(to: folder.appendingPathComponent("README"))
                #expect(try await ferry(["session", "set", "lab", "--ca-directory", folder.path]).status == 0)
                #expect(try await ferry(["get", "--session", "lab", url(3)]).status == 0)

                // The daemon's environment, as the service unit carries it.
                _ = try await ferry(["stop"])
                let environment = try await ferry(["get", url(4)], environment: ["SSL_CERT_FILE": authority.path])
                #expect(environment.status == 0, "\(environment)")

                let all = try Self.transfers(try await ferry(["ls", "--all", "--json"]))
                for n in 2...4 {
                    let transfer = try #require(all.first { $0.url == url(n) })
                    #expect(transfer.state == .completed && transfer.sha256 == files[n - 1].sha256, "\(transfer)")
                }

                // Not a certificate: refused before anything is queued.
                let notPEM = home.appendingPathComponent("not.pem")
                try Data("-----BEGIN PRIVATE KEY-----\nAAAA\n-----END PRIVATE KEY-----\n".utf8).write(to: notPEM)
                let refused = try await ferry(["get", "--ca-certificate", notPEM.path, url(1)])
                #expect(refused.status != 0 && refused.stderr.contains("is not a PEM certificate"), "\(refused)")
                let empty = home.appendingPathComponent("empty")
                try FileManager.default.createDirectory(at: empty, withIntermediateDirectories: true)
                let noneThere = try await ferry(["session", "set", "other", "--ca-directory", empty.path])
                #expect(noneThere.status != 0 && noneThere.stderr.contains("holds no PEM certificate"), "\(noneThere)")
                #expect(try Self.transfers(try await ferry(["ls", "--all", "--json"])).count == all.count, "nothing journaled")
                _ = try await ferry(["stop"])
            }
        }
    }

    /// Each refusal in one line that says whose certificate, what is wrong, and what to do; each
    /// fails at once (waiting mends no certificate).
    @Test(arguments: ["unknown authority", "expired", "other name", "self-signed"])
    func aRefusedCertificateIsExplainedInOneLine(_ problem: String) async throws {
        try await withTemporaryDirectory { folder in
            let lab = try TestAuthority(name: "Acme Lab CA")
            let certificate: (chain: URL, key: URL)
            let expected: String
            switch problem {
            case "expired":
                certificate = try lab.issue("old", notBefore: Date() - 40 * 86_400, notAfter: Date() - 10 * 86_400, in: folder)
                expected = "127.0.0.1's certificate (“CN=localhost”) expired on "
            case "other name":
                certificate = try lab.issue("other", names: ["files.example.org"], addresses: [], in: folder)
                expected = "127.0.0.1's certificate (“CN=files.example.org”) is for files.example.org, not 127.0.0.1; Ferry does not download from it. Use one of those names in the URL."
            case "self-signed":
                certificate = (Origin.certificatesFolder().appendingPathComponent("localhost.crt"), Origin.certificatesFolder().appendingPathComponent("localhost.key"))
                expected = "127.0.0.1's certificate (“CN=localhost”) is self-signed, and this machine does not trust it; Ferry does not download from it. If you trust it, give its authority's certificate with --ca-certificate FILE."
            default:
                certificate = try lab.issue("fine", in: folder)
                expected = "127.0.0.1's certificate (“CN=localhost”) is signed by “CN=Acme Lab CA”, an authority this machine does not trust; Ferry does not download from it. If you trust it, give its authority's certificate with --ca-certificate FILE."
            }
            let authority = folder.appendingPathComponent("lab-ca.pem")
            try lab.write(to: authority)
            try await Origin.run(certificate: certificate) { origin, base in
                origin.serve("/f", .init(data: Origin.bytes(10_000)))
                try await CommandRunner.withHome { home in
                    // The lab's authority is trusted where the problem is not the authority.
                    let trust = problem == "expired" || problem == "other name" ? ["--ca-certificate", authority.path] : []
                    let get = try await CommandRunner.ferry(["get"] + trust + [base.appendingPathComponent("f").absoluteString], home: home)
                    #expect(get.status != 0, "\(get)")
                    let transfer = try #require(try Self.transfers(try await CommandRunner.ferry(["ls", "--all", "--json"], home: home)).first)
                    #expect(transfer.state == .failed && transfer.attempts == 1 && transfer.error?.code == "untrusted_certificate", "\(transfer)")
                    #expect(transfer.error?.message.hasPrefix(expected) == true, "\(String(describing: transfer.error?.message))")
                    #expect(transfer.error?.message.contains("\n") == false && transfer.error?.message.contains("BoringSSL") == false)
                    if problem == "unknown authority" {
                        // Given the authority, the same server is trusted.
                        let trusted = try await CommandRunner.ferry(["get", "--ca-certificate", authority.path, base.appendingPathComponent("f").absoluteString], home: home)
                        #expect(trusted.status == 0, "\(trusted)")
                    }
                    _ = try await CommandRunner.ferry(["stop"], home: home)
                }
            }
        }
    }

    /// `--user-agent` and `--referer` reach the server, with every hop of a redirect.
    @Test func theUserAgentAndRefererAreTheUsers() async throws {
        try await Origin.run { origin, base in
            origin.serve("/f", .init(data: Origin.bytes(10_000)))
            origin.redirect("/moved", to: "/f")
            try await CommandRunner.withHome { home in
                let get = try await CommandRunner.ferry(
                    ["get", "-A", "Podcatcher/2.1", "--referer", "https://example.org/page", base.appendingPathComponent("moved").absoluteString], home: home
                )
                #expect(get.status == 0, "\(get)")
                #expect(origin.requests.count == 2)
                for request in origin.requests {
                    #expect(request.headers["user-agent"] == "Podcatcher/2.1" && request.headers["referer"] == "https://example.org/page", "\(request.headers)")
                }
                let refused = try await CommandRunner.ferry(["get", "--user-agent", "", base.appendingPathComponent("f").absoluteString], home: home)
                #expect(refused.status != 0 && refused.stderr.contains("--user-agent takes one line of text"), "\(refused)")
                _ = try await CommandRunner.ferry(["stop"], home: home)
            }
        }
    }

    static func transfers(_ output: CommandRunner.Output) throws -> [Transfer] {
        try FerryJSON.decoder().decode([Transfer].self, from: Data(output.stdout.utf8))
    }
}
