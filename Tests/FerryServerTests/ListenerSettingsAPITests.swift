import FerryKit
import FerryServer
import FerryTestSupport
import Foundation
import NIOHTTP1
import Testing

/// `/v1/listener-settings`: an admin's browser saves the listeners for the next start in the
/// files `ferry remote enable` and `ferry aria2 enable` write; what would stop the start is
/// refused; a member may neither read nor change them.
@Suite struct ListenerSettingsAPITests {
    @Test func anAdminSavesTheFilesTheNextStartReads() async throws {
        try await withTemporaryDirectory { home in
            try await DaemonHarness.run(home: home) { d in
                let json = [("Content-Type", "application/json")]
                let empty = try await d.raw(.GET, "/v1/listener-settings")
                #expect(empty.status == 200 && empty.body.contains(#""saved":{}"#), "\(empty)")

                let on = #"{"remote": {"listen": ["0.0.0.0:8443"], "serverNames": ["nas.local"]}, "aria2Port": 6801, "sync": {"listen": "0.0.0.0:8123"}}"#
                let saved = try await d.raw(.PUT, "/v1/listener-settings", headers: json, body: on)
                #expect(saved.status == 200, "\(saved)")
                let status = try FerryJSON.decoder().decode(ListenerSettingsStatus.self, from: Data(saved.body.utf8))
                #expect(status.saved.remote?.listen == ["0.0.0.0:8443"] && status.saved.aria2Port == 6801 && status.saved.sync?.listen == "0.0.0.0:8123")
                #expect(status.aria2Secret?.isEmpty == false, "a front end needs the secret")
                #expect(status.remoteURLs.isEmpty && status.aria2URL == nil, "nothing new listens before the next start")

                let files = ListenerSettingFiles(paths: d.paths)
                #expect(try files.remote()?.serverNames == ["nas.local"])
                #expect(try String(contentsOf: d.paths.aria2Setting, encoding: .utf8) == "6801\n", "as `ferry aria2 enable` writes it")
                #expect(try files.sync() == ListenerSettings.Sync(listen: "0.0.0.0:8123"))

                let refused: [String] = [
                    #"{"remote": {"listen": ["http://0.0.0.0:8080"]}}"#,  // plain HTTP without a trusted proxy
                    #"{"remote": {"listen": ["0.0.0.0:8443"], "certificate": "/nonexistent/cert.pem", "privateKey": "/nonexistent/key.pem"}}"#,
                    #"{"sync": {"listen": "not an address"}}"#,
                    #"{"aria2Port": 70000}"#,
                ]
                for body in refused {
                    let response = try await d.raw(.PUT, "/v1/listener-settings", headers: json, body: body)
                    #expect(response.status == 400 && response.body.contains("invalid_request"), "\(body): \(response)")
                }
                #expect(try files.read() == status.saved, "a refused change writes nothing")

                let off = try await d.raw(.PUT, "/v1/listener-settings", headers: json, body: "{}")
                #expect(off.status == 200)
                #expect(try files.read() == ListenerSettings())
                #expect(!FileManager.default.fileExists(atPath: d.paths.remoteSetting.path) && !FileManager.default.fileExists(atPath: d.paths.aria2Setting.path))
            }
        }
    }

    @Test func aMemberIsRefused() async throws {
        try await withTemporaryDirectory { home in
            try await DaemonHarness.run(home: home) { d in
                try await d.client.addUser("alice", password: "alice's password")
                let cookie = try await AccountAPITests.logIn(d, "alice", "alice's password")
                let headers = [("Cookie", cookie), ("Content-Type", "application/json")]
                for (method, body) in [(HTTPMethod.GET, nil), (.PUT, #"{"aria2Port": 6800}"#)] as [(HTTPMethod, String?)] {
                    let response = try await d.raw(method, "/v1/listener-settings", headers: headers, authorized: false, body: body)
                    #expect(response.status == 403 && response.body.contains("forbidden"), "\(method): \(response)")
                }
                #expect(ListenerSettingFiles(paths: d.paths).aria2Port() == nil)
                // Nor may a member restart the daemon to open them; an admin may (the browser's only way to).
                let restart = try await d.raw(.POST, "/v1/restart", headers: headers, authorized: false)
                #expect(restart.status == 403, "\(restart)")
                #expect(d.stops.all.isEmpty)
                #expect(try await d.raw(.POST, "/v1/restart").status == 202)
                #expect(d.stops.all == [.restart])
            }
        }
    }
}
