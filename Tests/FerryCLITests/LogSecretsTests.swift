import FerryKit
import FerryTestSupport
import Foundation
import Testing

/// What the daemon writes to daemon.log at its most talkative (trace) never carries a secret:
/// a proxy's password from the environment, an Authorization header, a password in a URL, an
/// account's password, a wrong login at the sync API.
@Suite struct LogSecretsTests {
    @Test func traceLoggingCarriesNoSecret() async throws {
        let secrets = ["proxy-secret-1", "header-secret-2", "url-secret-3", "account-secret-4", "sync-secret-5", "login-secret-6"]
        try await Origin.run { origin, base in
            origin.serve("/f", .init(data: Origin.bytes(2000)))
            origin.serve("/g", .init(data: Origin.bytes(3000, seed: 2)))
            origin.serve("/h", .init(data: Origin.bytes(4000, seed: 3)))
            origin.protect("/h", OriginLogin([.basic], user: "carol", password: secrets[5]))
            try await CommandRunner.withHome { home in
                let environment = ["all_proxy": "http://ann:\(secrets[0])@127.0.0.1:9", "no_proxy": "127.0.0.1,localhost"]
                func ferry(_ arguments: String..., input: String? = nil) async throws -> CommandRunner.Output {
                    try await CommandRunner.ferry(arguments, home: home, extraEnvironment: environment, input: input)
                }
                let sync = try unusedLoopbackPort()
                #expect(try await ferry("serve", "--detach", "--log-level", "trace", "--sync-listen", "\(sync)").status == 0)
                #expect(try await ferry("get", "--header", "Authorization: Bearer \(secrets[1])", base.appendingPathComponent("f").absoluteString).status == 0)
                var withPassword = URLComponents(url: base.appendingPathComponent("g"), resolvingAgainstBaseURL: false)!
                withPassword.user = "bob"
                withPassword.password = secrets[2]
                let got = try await ferry("get", withPassword.url!.absoluteString)
                #expect(got.status == 0, "\(got)")
                #expect(try await ferry("user", "add", "alice", "--password-stdin", input: "\(secrets[3])\n").status == 0)
                let login = try await ferry("get", "--user", "carol", "--password-stdin", base.appendingPathComponent("h").absoluteString, input: "\(secrets[5])\n")
                #expect(login.status == 0, "\(login)")
                // A phone that logs in with a wrong password, then the right one.
                for password in [secrets[4], secrets[3]] {
                    let login = try await CommandRunner.run(
                        "/usr/bin/curl", ["-s", "-o", "/dev/null", "-w", "%{http_code}", "-u", "alice:\(password)", "-X", "POST", "http://127.0.0.1:\(sync)/api/2/auth/alice/login.json"],
                        environment: [:], timeout: .seconds(20)
                    )
                    #expect(login.stdout == (password == secrets[3] ? "200" : "401"), "\(login)")
                }
                _ = try await ferry("stop")
                let log = try String(contentsOf: home.appendingPathComponent("state/daemon.log"), encoding: .utf8)
                // It did log what carries one, redacted, and the clients' traffic at trace level.
                #expect(log.contains("http://ann:<redacted>@127.0.0.1:9"), "\(log.prefix(2000))")
                #expect(log.contains("[AsyncHTTPClient] HTTP response part received") && log.contains("transfer.id=2"))
                for secret in secrets { #expect(!log.contains(secret), "daemon.log carries \(secret)") }
                // Nor the Basic credentials as they travel.
                #expect(!log.contains(Data("alice:\(secrets[3])".utf8).base64EncodedString()))
                #expect(!log.contains(Data("carol:\(secrets[5])".utf8).base64EncodedString()), "the Basic answer to a server")
            }
        }
    }
}
