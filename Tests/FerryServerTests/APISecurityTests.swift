import FerryKit
import FerryTestSupport
import Foundation
import Testing

/// The daemon's front door: token, loopback Host, Origin, and the error shape.
@Suite struct APISecurityTests {
    @Test func everyAPICallNeedsTheToken() async throws {
        try await withTemporaryDirectory { home in
            try await DaemonHarness.run(home: home) { d in
                for path in ["/v1/status", "/v1/transfers", "/v1/sessions/cli/events", "/v1/openapi.yaml"] {
                    let response = try await d.raw(.GET, path, authorized: false)
                    #expect(response.status == 401, "\(path)")
                    let error = try FerryJSON.decoder().decode(ErrorResponse.self, from: Data(response.body.utf8))
                    #expect(error.error.code == "unauthorized")
                }
                let wrong = try await d.raw(.GET, "/v1/status", headers: [("Authorization", "Bearer " + String(repeating: "0", count: 64))], authorized: false)
                #expect(wrong.status == 401)
                let ok = try await d.raw(.GET, "/v1/status")
                #expect(ok.status == 200)
            }
        }
    }

    @Test func theTokenFileIsPrivate() async throws {
        try await withTemporaryDirectory { home in
            try await DaemonHarness.run(home: home) { d in
                let attributes = try FileManager.default.attributesOfItem(atPath: d.paths.token.path)
                #expect((attributes[.posixPermissions] as? Int) == 0o600)
                #expect(try DaemonToken.read(d.paths) == d.daemon.token)
                #expect(d.daemon.token.count == 64)
            }
        }
    }

    @Test(arguments: ["evil.example", "evil.example:7447", "127.0.0.1.evil.example", "192.168.1.10:7447", "[::2]:7447"])
    func aForeignHostIsRefused(host: String) async throws {
        try await withTemporaryDirectory { home in
            try await DaemonHarness.run(home: home) { d in
                let response = try await d.raw(.GET, "/v1/status", headers: [("Host", host)])
                #expect(response.status == 403)
                #expect(response.body.contains("forbidden_host"))
            }
        }
    }

    @Test(arguments: ["localhost", "127.0.0.1", "[::1]", "app.localhost", "127.1.2.3"])
    func loopbackHostsAreAccepted(host: String) async throws {
        try await withTemporaryDirectory { home in
            try await DaemonHarness.run(home: home) { d in
                let response = try await d.raw(.GET, "/v1/status", headers: [("Host", "\(host):\(d.port)")])
                #expect(response.status == 200)
            }
        }
    }

    @Test func stateChangesFromAForeignOriginAreRefused() async throws {
        try await withTemporaryDirectory { home in
            try await DaemonHarness.run(home: home) { d in
                let body = #"{"urls":["http://127.0.0.1:9/x"]}"#
                let evil = try await d.raw(.POST, "/v1/transfers", headers: [("Origin", "https://evil.example"), ("Content-Type", "application/json")], body: body)
                #expect(evil.status == 403)
                #expect(evil.body.contains("forbidden_origin"))
                let null = try await d.raw(.POST, "/v1/shutdown", headers: [("Origin", "null")])
                #expect(null.status == 403)
                let got1 = try await d.client.transfers().transfers
                #expect(got1.isEmpty)
                let own = try await d.raw(.POST, "/v1/transfers", headers: [("Origin", "http://localhost:\(d.port)"), ("Content-Type", "application/json")], body: body)
                #expect(own.status == 201)
                // Reading is not a state change.
                let read = try await d.raw(.GET, "/v1/transfers", headers: [("Origin", "https://evil.example")])
                #expect(read.status == 200)
            }
        }
    }

    @Test func unknownRoutesGetAJSONNotFound() async throws {
        try await withTemporaryDirectory { home in
            try await DaemonHarness.run(home: home) { d in
                let response = try await d.raw(.GET, "/v1/nope")
                #expect(response.status == 404)
                let error = try FerryJSON.decoder().decode(ErrorResponse.self, from: Data(response.body.utf8))
                #expect(error.error.code == "not_found")
                #expect(response.headers.first(name: "Content-Type")?.hasPrefix("application/json") == true)
            }
        }
    }
}
