import AsyncHTTPClient
import FerryKit
import FerryTestSupport
import Foundation
import NIOCore
import Testing

/// `ferry serve --aria2-rpc`, `ferry aria2 secret` and `ferry status` with the real binary.
@Suite(.serialized) struct Aria2CLITests {
    @Test func theRPCAnswersWithTheSecretFerryPrints() async throws {
        try await CommandRunner.withHome { home in
            func ferry(_ arguments: String...) async throws -> CommandRunner.Output {
                try await CommandRunner.ferry(arguments, home: home)
            }
            let lonely = try await ferry("serve", "--aria2-port", "6801")
            #expect(lonely.status != 0 && lonely.stderr.contains("--aria2-port needs --aria2-rpc"), "\(lonely)")
            #expect(try await ferry("serve", "--detach", "--port", "0", "--aria2-rpc", "--aria2-port", "0").status == 0)
            let secret = try await ferry("aria2", "secret").stdout.trimmingCharacters(in: .whitespacesAndNewlines)
            #expect(secret.count == 64 && secret.allSatisfy(\.isHexDigit))
            #expect(try await ferry("aria2", "secret").stdout.trimmingCharacters(in: .whitespacesAndNewlines) == secret, "the same each time")
            let status = try FerryJSON.decoder().decode(DaemonStatus.self, from: Data(try await ferry("status", "--json").stdout.utf8))
            let url = try #require(status.aria2URL)
            #expect(url.hasPrefix("http://127.0.0.1:") && url.hasSuffix("/jsonrpc") && status.syncURL == nil)
            #expect(try await ferry("status").stdout.contains("aria2 RPC: \(url)"))

            let http = try makeTestHTTPClient()
            func version(_ token: String) async throws -> [String: Any] {
                var request = HTTPClientRequest(url: url)
                request.method = .POST
                request.body = .bytes(ByteBuffer(string: #"{"jsonrpc": "2.0", "id": 1, "method": "aria2.getVersion", "params": ["token:\#(token)"]}"#))
                let bytes = try await http.execute(request, timeout: .seconds(30)).body.collect(upTo: 1 << 20)
                return try JSONSerialization.jsonObject(with: Data(buffer: bytes)) as? [String: Any] ?? [:]
            }
            do {
                #expect((try await version(secret)["result"] as? [String: Any])?["version"] as? String == "1.37.0")
                #expect((try await version("nope")["error"] as? [String: Any])?["message"] as? String == "Unauthorized")
            } catch {
                try? await http.shutdown()
                throw error
            }
            try await http.shutdown()
        }
    }

    /// `ferry aria2 enable` is a daemon setting: the next `ferry serve` answers the RPC without
    /// the flag; `disable` turns it off again.
    @Test func theRPCIsADaemonSetting() async throws {
        try await CommandRunner.withHome { home in
            func ferry(_ arguments: String...) async throws -> CommandRunner.Output {
                try await CommandRunner.ferry(arguments, home: home)
            }
            func status() async throws -> [String: Any] {
                try JSONSerialization.jsonObject(with: Data(try await ferry("aria2", "status", "--json").stdout.utf8)) as? [String: Any] ?? [:]
            }
            #expect(try await status()["enabled"] as? Bool == false)
            #expect(try await ferry("aria2", "enable", "--port", "70000").stderr.contains("--port must be between 0 and 65535"))
            let enabled = try await ferry("aria2", "enable", "--port", "0")
            #expect(enabled.status == 0 && enabled.stdout.contains("next start"), "\(enabled)")
            let on = try await status()
            #expect(on["enabled"] as? Bool == true && on["port"] as? Int == 0 && on["url"] == nil)
            #expect(try await ferry("serve", "--detach", "--port", "0").status == 0)
            let url = try #require(try await status()["url"] as? String)
            #expect(url.hasPrefix("http://127.0.0.1:") && url.hasSuffix("/jsonrpc"))
            #expect(try await ferry("aria2", "status").stdout.contains("The running daemon answers at \(url)"))
            #expect(try await ferry("aria2", "disable").status == 0)
            #expect(try await status()["enabled"] as? Bool == false)
        }
    }
}
