import FerryKit
import FerryTestSupport
import Foundation
import NIOHTTP1
import Testing

/// Accounts through the API: an admin manages them; a password logs a browser in; a member may
/// listen and download but not manage the daemon or anyone else; sessions and tokens end when
/// they should.
@Suite struct AccountAPITests {
    @Test func anAdminManagesUsersAndBadInputIsRefused() async throws {
        try await withTemporaryDirectory { home in
            try await DaemonHarness.run(home: home) { d in
                let alice = try await d.client.addUser("alice", password: "alice's password")
                #expect(alice.role == .member && alice.sessions == 0)
                try await d.client.addUser("bob", password: "bob's password", role: .admin)
                #expect(try await d.client.users().users.map { "\($0.name) \($0.role.rawValue)" } == ["alice member", "bob admin"])
                await expectCode("invalid_state") { try await d.client.addUser("alice", password: "another password") }
                await expectCode("invalid_request") { try await d.client.addUser("no spaces", password: "long enough") }
                await expectCode("invalid_request") { try await d.client.addUser("carol", password: "short") }
                await expectCode("not_found") { try await d.client.updateUser("nobody", UpdateAccountRequest(role: .admin)) }
                // The sync API's users are the same accounts.
                #expect(try await d.client.syncUsers().users.map(\.name) == ["alice", "bob"])
                try await d.client.updateUser("alice", UpdateAccountRequest(role: .admin))
                #expect(try await d.client.users().users.first?.role == .admin)
                try await d.client.removeUser("alice")
                await expectCode("not_found") { try await d.client.removeUser("alice") }
                #expect(try await d.client.signedIn() == SignedIn(user: nil, role: .admin, via: "token"))
            }
        }
    }

    @Test func aPasswordLogsInAndAWrongOneIsRefusedSlowly() async throws {
        try await withTemporaryDirectory { home in
            try await DaemonHarness.run(home: home) { d in
                try await d.client.addUser("alice", password: "alice's password")
                let cookie = try await Self.logIn(d, "alice", "alice's password")
                let me = try await d.raw(.GET, "/v1/me", headers: [("Cookie", cookie)], authorized: false)
                #expect(me.status == 200 && me.body.contains("\"user\":\"alice\"") && me.body.contains("\"via\":\"session\""), "\(me)")

                for (name, password) in [("alice", "wrong password"), ("nobody", "alice's password"), (String(repeating: "a", count: 70), "x")] {
                    let start = ContinuousClock.now
                    let refused = try await Self.login(d, name, password)
                    #expect(refused.status == 401 && refused.headers.first(name: "Set-Cookie") == nil, "\(name): \(refused)")
                    #expect(ContinuousClock.now - start >= .milliseconds(400), "a failed login waits before its answer")
                }
                let noCookie = try await d.raw(.GET, "/v1/me", authorized: false)
                #expect(noCookie.status == 401)
                let forged = try await d.raw(.GET, "/v1/me", headers: [("Cookie", "ferry_user=\(String(repeating: "0", count: 64))")], authorized: false)
                #expect(forged.status == 401)
                // Signing out ends the session on the server, not only in the browser.
                let out = try await d.raw(.DELETE, "/v1/session", headers: [("Cookie", cookie)], authorized: false)
                #expect(out.status == 204 && out.headers.first(name: "Set-Cookie")?.contains("Max-Age=0") == true)
                #expect(try await d.raw(.GET, "/v1/me", headers: [("Cookie", cookie)], authorized: false).status == 401)
            }
        }
    }

    /// A member listens and downloads, and manages only their own account.
    @Test func aMemberIsRefusedWhatIsNotTheirs() async throws {
        try await withTemporaryDirectory { home in
            try await DaemonHarness.run(home: home) { d in
                try await d.client.addUser("alice", password: "alice's password")
                try await d.client.addUser("bob", password: "bob's password")
                let cookie = try await Self.logIn(d, "alice", "alice's password")
                let json = ("Content-Type", "application/json")
                let later = #"{"urls": ["http://127.0.0.1:9/a"], "options": {"startAfter": "2100-01-01T00:00:00Z"}}"#
                let allowed: [(HTTPMethod, String, String?)] = [
                    (.GET, "/v1/transfers", nil), (.GET, "/v1/status", nil), (.GET, "/v1/podcasts", nil), (.GET, "/v1/up-next", nil),
                    (.POST, "/v1/transfers", later), (.GET, "/v1/users/alice", nil), (.GET, "/v1/users/alice/sessions", nil),
                ]
                for (method, path, body) in allowed {
                    let response = try await d.raw(method, path, headers: [("Cookie", cookie), json], authorized: false, body: body)
                    #expect((200...299).contains(response.status), "\(method) \(path): \(response)")
                }
                let refused: [(HTTPMethod, String, String?)] = [
                    (.GET, "/v1/users", nil), (.POST, "/v1/users", #"{"name": "eve", "password": "eve's password"}"#),
                    (.GET, "/v1/users/bob/sessions", nil), (.PATCH, "/v1/users/bob", #"{"password": "taken over!"}"#),
                    (.PATCH, "/v1/users/alice", #"{"role": "admin"}"#), (.DELETE, "/v1/users/bob", nil),
                    (.PATCH, "/v1/config", #"{"maxConcurrent": 1}"#), (.GET, "/v1/config", nil), (.POST, "/v1/shutdown", nil),
                    (.PATCH, "/v1/sessions/cli/config", #"{"headers": {"X": "y"}}"#), (.POST, "/v1/uploads", #"{"url": "http://127.0.0.1:9/", "file": "/etc/passwd"}"#),
                    (.POST, "/v1/extension/pairing-codes", nil), (.POST, "/v1/login-links", nil), (.POST, "/v1/sync/users", #"{"name": "eve", "password": "eve's password"}"#),
                    (.POST, "/v1/transfers/pause-all", nil), (.DELETE, "/v1/transfers", nil), (.GET, "/v1/transfers/1/resume-data", nil),
                    (.GET, "/v1/doctor", nil), (.POST, "/v1/doctor", nil),
                    (.POST, "/v1/transfers", #"{"urls": ["http://127.0.0.1:9/c"], "options": {"caCertificate": "/etc/ssl/private/key.pem"}}"#),
                    (.POST, "/v1/transfers", #"{"urls": ["http://127.0.0.1:9/d"], "options": {"netrcFile": "/root/.netrc"}}"#),
                    (.GET, "/v1/credentials", nil), (.POST, "/v1/credentials", #"{"host": "a.example", "user": "u", "password": "p"}"#),
                    (.DELETE, "/v1/credentials/a.example", nil),
                    (.POST, "/v1/transfers", #"{"urls": ["http://127.0.0.1:9/b"], "directory": "/etc"}"#),
                    (.POST, "/v1/transfers", #"{"urls": ["http://127.0.0.1:9/b"], "options": {"onComplete": "touch /tmp/pwned"}}"#),
                ]
                for (method, path, body) in refused {
                    let response = try await d.raw(method, path, headers: [("Cookie", cookie), json], authorized: false, body: body)
                    #expect(response.status == 403 && response.body.contains("\"code\":\"forbidden\""), "\(method) \(path): \(response)")
                }
                #expect(try await d.client.users().users.map(\.name) == ["alice", "bob"], "nothing changed")
                #expect(try await d.client.transfers().transfers.count == 1, "only the allowed download")
                #expect(try await d.client.daemonConfiguration().maxConcurrent == nil)
            }
        }
    }

    /// Everyone's list is visible; a member pauses, resumes, cancels, reorders or removes only
    /// their own transfers, and sees no other's options or upload answer.
    @Test func aMemberActsOnTheirOwnTransfersAlone() async throws {
        try await withTemporaryDirectory { home in
            try await DaemonHarness.run(home: home) { d in
                try await d.client.addUser("alice", password: "alice's password")
                try await d.client.addUser("bob", password: "bob's password")
                let alice = DaemonClient(baseURL: d.baseURL, token: try await d.client.makeUserToken("alice").token)
                let bob = DaemonClient(baseURL: d.baseURL, token: try await d.client.makeUserToken("bob").token)
                let later = Date().addingTimeInterval(86_400)
                let hers = try await alice.createTransfers(.init(urls: ["http://127.0.0.1:9/hers"], options: .init(headers: ["X-Note": "alice's"], startAfter: later))).transfers[0]
                let his = try await bob.createTransfers(.init(urls: ["http://127.0.0.1:9/his"], options: .init(headers: ["X-Note": "bob's"], startAfter: later))).transfers[0]
                let servers = try await d.client.createTransfers(.init(urls: ["http://127.0.0.1:9/server"], options: .init(startAfter: later))).transfers[0]
                #expect(hers.requestedBy == "alice" && his.requestedBy == "bob" && servers.requestedBy == nil)

                #expect(try await alice.pause(hers.id).state == .paused)
                #expect(try await alice.resume(hers.id).state == .queued)
                for id in [his.id, servers.id] {
                    await expectCode("forbidden") { _ = try await alice.pause(id) }
                    await expectCode("forbidden") { _ = try await alice.cancel(id) }
                    await expectCode("forbidden") { try await alice.remove(id) }
                    await expectCode("forbidden") { _ = try await alice.update(id, TransferUpdate(priority: .high)) }
                }
                let seen = try await alice.transfers().transfers
                #expect(seen.map(\.id) == [hers.id, his.id, servers.id], "everyone's list is visible")
                #expect(seen[0].options?.headers?["X-Note"] == "alice's")
                #expect(seen[1].options == nil && seen[1].requestedBy == "bob", "not another's headers")
                #expect(try await alice.transfer(his.id).options == nil)
                #expect(try await bob.transfer(his.id).options?.headers?["X-Note"] == "bob's")
                #expect(try await d.client.transfer(his.id).options?.headers?["X-Note"] == "bob's", "the daemon's token sees all")
                #expect(try await d.client.transfers().transfers.map(\.state) == [.queued, .queued, .queued], "nothing of the refused")
                #expect(try await d.client.cancel(his.id).state == .cancelled, "an admin acts on any")
            }
        }
    }

    /// Changing a password needs the old one from a member, and ends every other session.
    @Test func aNewPasswordEndsTheOtherSessions() async throws {
        try await withTemporaryDirectory { home in
            try await DaemonHarness.run(home: home) { d in
                try await d.client.addUser("alice", password: "alice's password")
                let phone = try await Self.logIn(d, "alice", "alice's password")
                let laptop = try await Self.logIn(d, "alice", "alice's password")
                #expect(try await d.client.userSessions("alice").credentials.count == 2)
                let noOld = try await d.raw(.PATCH, "/v1/users/alice", headers: [("Cookie", laptop)], authorized: false, body: #"{"password": "a new password"}"#)
                #expect(noOld.status == 403)
                let change = try await d.raw(
                    .PATCH, "/v1/users/alice", headers: [("Cookie", laptop)], authorized: false,
                    body: #"{"password": "a new password", "currentPassword": "alice's password"}"#
                )
                #expect(change.status == 200, "\(change)")
                #expect(try await d.raw(.GET, "/v1/me", headers: [("Cookie", phone)], authorized: false).status == 401, "the phone's session ended")
                #expect(try await d.raw(.GET, "/v1/me", headers: [("Cookie", laptop)], authorized: false).status == 200, "the one that changed it stays")
                #expect(try await Self.login(d, "alice", "alice's password").status == 401)
                _ = try await Self.logIn(d, "alice", "a new password")
                // Sign out everywhere (from the laptop): only the laptop stays.
                let everywhere = try await d.raw(.DELETE, "/v1/users/alice/sessions", headers: [("Cookie", laptop)], authorized: false)
                #expect(everywhere.status == 204)
                let left = try await d.client.userSessions("alice").credentials
                #expect(left.count == 1)
                // An admin's password change ends them all.
                try await d.client.updateUser("alice", UpdateAccountRequest(password: "an admin's choice"))
                #expect(try await d.client.userSessions("alice").credentials.isEmpty)
            }
        }
    }

    /// A user's token works as a Bearer token with the user's rights, until it is revoked or
    /// the user removed.
    @Test func aUsersTokenCarriesTheirRights() async throws {
        try await withTemporaryDirectory { home in
            try await DaemonHarness.run(home: home) { d in
                try await d.client.addUser("alice", password: "alice's password")
                let token = try await d.client.makeUserToken("alice", label: "laptop script")
                #expect(token.token.hasPrefix("ferry_"))
                let alice = DaemonClient(baseURL: d.baseURL, token: token.token)
                #expect(try await alice.signedIn() == SignedIn(user: "alice", role: .member, via: "accountToken"))
                await expectCode("forbidden") { _ = try await alice.users() }
                let tokens = try await alice.userTokens("alice").credentials
                #expect(tokens.map(\.id) == [token.id] && tokens.first?.label == "laptop script")
                #expect(!String(decoding: try FerryJSON.encoder().encode(tokens), as: UTF8.self).contains(token.token), "never listed")
                try await d.client.removeUserToken("alice", id: token.id)
                await expectCode("unauthorized") { _ = try await alice.signedIn() }

                let second = try await d.client.makeUserToken("alice")
                try await d.client.removeUser("alice")
                await expectCode("unauthorized") { _ = try await DaemonClient(baseURL: d.baseURL, token: second.token).signedIn() }
            }
        }
    }

    // MARK: Helpers

    static func login(_ d: DaemonHarness, _ name: String, _ password: String) async throws -> (status: Int, body: String, headers: HTTPHeaders) {
        let body = String(decoding: try FerryJSON.encoder().encode(LoginRequest(name: name, password: password)), as: UTF8.self)
        return try await d.raw(.POST, "/v1/session", headers: [("Content-Type", "application/json")], authorized: false, body: body)
    }

    /// The `Cookie` header value of a new session.
    static func logIn(_ d: DaemonHarness, _ name: String, _ password: String) async throws -> String {
        let response = try await login(d, name, password)
        guard response.status == 204, let cookie = response.headers.first(name: "Set-Cookie") else { throw TestFailure("login failed: \(response)") }
        #expect(cookie.contains("HttpOnly") && cookie.contains("SameSite=Strict"))
        return String(cookie.split(separator: ";")[0])
    }
}

func expectCode(_ code: String, sourceLocation: SourceLocation = #_sourceLocation, _ body: () async throws -> Void) async {
    do {
        try await body()
        Issue.record("expected \(code), nothing was thrown", sourceLocation: sourceLocation)
    } catch let error as FerryError {
        #expect(error.code.rawValue == code, "\(error)", sourceLocation: sourceLocation)
    } catch {
        Issue.record("expected \(code), got \(error)", sourceLocation: sourceLocation)
    }
}
