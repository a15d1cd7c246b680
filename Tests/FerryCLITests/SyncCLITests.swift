import AsyncHTTPClient
import FerryKit
import FerryTestSupport
import Foundation
import NIOCore
import Testing

/// `ferry serve --sync-listen` and `ferry sync user` with the real binary.
@Suite(.serialized) struct SyncCLITests {
    @Test func aSyncUserLogsInOnTheSyncListener() async throws {
        try await CommandRunner.withHome { home in
            func ferry(_ arguments: String..., input: String? = nil) async throws -> CommandRunner.Output {
                try await CommandRunner.ferry(arguments, home: home, input: input)
            }
            let bad = try await ferry("serve", "--sync-listen", "nowhere")
            #expect(bad.status != 0 && bad.stderr.contains("--sync-listen takes PORT or ADDRESS:PORT"), "\(bad)")
            let lonely = try await ferry("serve", "--sync-listen", "0", "--sync-key", "/etc/hostname")
            #expect(lonely.status != 0 && lonely.stderr.contains("go together"), "\(lonely)")

            let serve = try await ferry("serve", "--detach", "--port", "0", "--sync-listen", "0")
            #expect(serve.status == 0, "\(serve)")
            let none = try await ferry("sync", "user", "ls")
            #expect(none.stdout.contains("No sync users yet"), "\(none)")

            // The password from standard input (its first line); none is an error.
            let empty = try await ferry("sync", "user", "add", "alice", "--password-stdin", input: "")
            #expect(empty.status != 0 && empty.stderr.contains("No password"), "\(empty)")
            let noTerminal = try await ferry("sync", "user", "add", "alice")
            #expect(noTerminal.status != 0 && noTerminal.stderr.contains("--password-stdin"), "\(noTerminal)")
            let add = try await ferry("sync", "user", "add", "alice", "--password-stdin", input: "correct horse\nignored\n")
            #expect(add.status == 0 && add.stdout.contains("Sync user alice is ready. Phones sync at http://127.0.0.1:"), "\(add)")
            let short = try await ferry("sync", "user", "add", "bob", "--password-stdin", input: "short\n")
            #expect(short.status != 0 && short.stderr.contains("8 to 1,024"), "\(short)")

            let listed = try await ferry("sync", "user", "ls", "--json")
            let list = try FerryJSON.decoder().decode(SyncUserList.self, from: Data(listed.stdout.utf8))
            #expect(list.users.map(\.name) == ["alice"])
            let url = try #require(list.url)

            // A phone's login on the sync listener, with the password given on stdin.
            let http = try makeTestHTTPClient()
            func login(_ password: String) async throws -> Int {
                var request = HTTPClientRequest(url: url + "/api/2/auth/alice/login.json")
                request.method = .POST
                request.headers.add(name: "Authorization", value: "Basic " + Data("alice:\(password)".utf8).base64EncodedString())
                return Int(try await http.execute(request, timeout: .seconds(30)).status.code)
            }
            do {
                #expect(try await login("correct horse") == 200)
                #expect(try await login("ignored") == 401)
                let removed = try await ferry("sync", "user", "rm", "alice")
                #expect(removed.status == 0, "\(removed)")
                #expect(try await login("correct horse") == 401)
                let missing = try await ferry("sync", "user", "rm", "alice")
                #expect(missing.status != 0 && missing.stderr.contains("no user 'alice'"), "\(missing)")
            } catch {
                try? await http.shutdown()
                throw error
            }
            try await http.shutdown()
        }
    }
}
