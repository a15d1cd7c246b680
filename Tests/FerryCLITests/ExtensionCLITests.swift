import AsyncHTTPClient
import FerryKit
import FerryTestSupport
import Foundation
import NIOCore
import NIOHTTP1
import Testing

/// `ferry extension pair`, `status` and `revoke` with the real binary and daemon.
@Suite(.serialized) struct ExtensionCLITests {
    @Test func pairStatusAndRevoke() async throws {
        try await CommandRunner.withHome { home in
            func ferry(_ arguments: String...) async throws -> CommandRunner.Output {
                try await CommandRunner.ferry(arguments, home: home)
            }
            let serve = try await ferry("serve", "--detach", "--port", "0")
            #expect(serve.status == 0, "\(serve)")
            let none = try await ferry("extension", "status")
            #expect(none.stdout.contains("No browser extension is paired"), "\(none)")

            let printed = try await ferry("extension", "pair")
            #expect(printed.status == 0 && printed.stdout.contains("Pairing code:") && printed.stdout.contains("Daemon address: http://127.0.0.1:"), "\(printed)")
            let paired = try await ferry("extension", "pair", "--json")
            let code = try FerryJSON.decoder().decode(ExtensionPairingCode.self, from: Data(paired.stdout.utf8))
            #expect(code.code.count == 32 && code.expiresInSeconds == 300)

            // The extension's side: the code for a token, from its origin.
            let http = try makeTestHTTPClient()
            func send(_ method: HTTPMethod, _ path: String, token: String? = nil, body: String? = nil) async throws -> (Int, String) {
                var request = HTTPClientRequest(url: code.daemonURL + path)
                request.method = method
                request.headers.add(name: "Origin", value: "chrome-extension://abcdefghijklmnopabcdefghijklmnop")
                if let token { request.headers.add(name: "Authorization", value: "Bearer \(token)") }
                if let body {
                    request.headers.add(name: "Content-Type", value: "application/json")
                    request.body = .bytes(ByteBuffer(string: body))
                }
                let response = try await http.execute(request, timeout: .seconds(30))
                return (Int(response.status.code), String(buffer: try await response.body.collect(upTo: 1 << 20)))
            }
            do {
                let (status, body) = try await send(.POST, "/v1/extension/pair", body: #"{"code":"\#(code.code)"}"#)
                #expect(status == 201, "\(body)")
                let token = try FerryJSON.decoder().decode(ExtensionToken.self, from: Data(body.utf8)).token
                #expect(try await send(.GET, "/v1/transfers", token: token).0 == 200)

                let shown = try await ferry("extension", "status", "--json")
                let status2 = try FerryJSON.decoder().decode(ExtensionStatus.self, from: Data(shown.stdout.utf8))
                #expect(status2.paired && status2.origin == "chrome-extension://abcdefghijklmnopabcdefghijklmnop")
                let text = try await ferry("extension", "status")
                #expect(text.stdout.contains("A browser extension is paired since") && text.stdout.contains("chrome-extension://"), "\(text)")

                let revoked = try await ferry("extension", "revoke")
                #expect(revoked.status == 0 && revoked.stdout.contains("Revoked"), "\(revoked)")
                #expect(try await send(.GET, "/v1/transfers", token: token).0 == 401)
                let again = try await ferry("extension", "revoke", "--json")
                #expect(again.stdout.contains(#""paired" : false"#), "\(again)")
                let help = try await ferry("extension", "--help")
                #expect(help.stdout.contains("Load unpacked") || help.stdout.contains("load it unpacked"), "\(help)")
            } catch {
                try? await http.shutdown()
                throw error
            }
            try await http.shutdown()
        }
    }
}
