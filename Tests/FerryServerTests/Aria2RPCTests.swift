import AsyncHTTPClient
import FerryCore
import FerryKit
import FerryTestSupport
import Foundation
import NIOCore
import Testing

@testable import FerryServer

/// aria2's JSON-RPC on `ferry serve --aria2-rpc`: the calls aria2's front ends make, with aria2's
/// result shapes (numbers as strings, its statuses) and its error objects.
@Suite struct Aria2RPCTests {
    struct RPC {
        let url: String
        let secret: String
        let http: HTTPClient

        /// POSTs a body → the parsed answer.
        func post(_ body: String, host: String? = nil) async throws -> (status: Int, json: Any?) {
            var request = HTTPClientRequest(url: url)
            request.method = .POST
            if let host { request.headers.replaceOrAdd(name: "Host", value: host) }
            request.body = .bytes(ByteBuffer(string: body))
            let response = try await http.execute(request, timeout: .seconds(30))
            let bytes = try await response.body.collect(upTo: 4 << 20)
            return (Int(response.status.code), try? JSONSerialization.jsonObject(with: Data(buffer: bytes), options: .fragmentsAllowed))
        }

        /// One call with the secret → its result, or a failure with aria2's error.
        func call(_ method: String, _ params: Any..., token: String? = nil) async throws -> Any {
            let answer = try await send(method, params, token: token)
            guard let result = answer["result"] else { throw TestFailure("\(method): \(answer)") }
            return result
        }

        /// One call → the whole response object.
        func send(_ method: String, _ params: [Any], token: String? = nil) async throws -> [String: Any] {
            let body = try JSONSerialization.data(withJSONObject: ["jsonrpc": "2.0", "id": "t", "method": method, "params": ["token:\(token ?? secret)"] + params])
            guard let object = try await post(String(decoding: body, as: UTF8.self)).json as? [String: Any] else { throw TestFailure("no object") }
            return object
        }

        func error(_ method: String, _ params: Any..., token: String? = nil) async throws -> [String: Any] {
            let answer = try await send(method, params, token: token)
            return answer["error"] as? [String: Any] ?? [:]
        }

        func status(_ gid: String) async throws -> [String: Any] {
            try await call("aria2.tellStatus", gid) as? [String: Any] ?? [:]
        }
    }

    static func withRPC(_ body: @Sendable (DaemonHarness, RPC, Origin, URL) async throws -> Void) async throws {
        try await Origin.run { origin, base in
            try await withTemporaryDirectory { home in
                try await DaemonHarness.run(home: home, configure: { $0.aria2 = Aria2Listener(port: 0) }) { d in
                    try await eventually("the aria2 RPC to listen") { d.daemon.aria2Address.url != nil }
                    let secret = try String(contentsOf: d.paths.aria2Secret, encoding: .utf8).trimmingCharacters(in: .whitespacesAndNewlines)
                    let http = try makeTestHTTPClient()
                    do {
                        try await body(d, RPC(url: d.daemon.aria2Address.url!, secret: secret, http: http), origin, base)
                    } catch {
                        try? await http.shutdown()
                        throw error
                    }
                    try await http.shutdown()
                }
            }
        }
    }

    @Test func aDownloadAddedByURIIsAFerryTransferWithAria2sStatus() async throws {
        try await Self.withRPC { d, rpc, origin, base in
            let file = Origin.File(data: Origin.bytes(300_000, seed: 3))
            origin.serve("/a.bin", file)
            let gid = try #require(try await rpc.call("aria2.addUri", [base.appendingPathComponent("a.bin").absoluteString], ["out": "renamed.bin", "header": ["X-From: aria2"]]) as? String)
            #expect(gid.count == 16 && gid.allSatisfy(\.isHexDigit))
            try await eventually("complete") { try await rpc.status(gid)["status"] as? String == "complete" }
            let status = try await rpc.status(gid)
            #expect(status["gid"] as? String == gid)
            #expect(status["totalLength"] as? String == "300000" && status["completedLength"] as? String == "300000")
            #expect(status["errorCode"] as? String == "0" && status["connections"] as? String == "0")
            let files = try #require(status["files"] as? [[String: Any]])
            let path = try #require(files.first?["path"] as? String)
            #expect(path.hasSuffix("/renamed.bin") && status["dir"] as? String == (path as NSString).deletingLastPathComponent)
            #expect(try Data(contentsOf: URL(fileURLWithPath: path)).sha256Hex == file.sha256)
            #expect(origin.requests(for: "/a.bin").last?.headers["x-from"] == "aria2")
            // Only the keys asked for.
            let some = try #require(try await rpc.call("aria2.tellStatus", gid, ["status", "totalLength"]) as? [String: String])
            #expect(some == ["status": "complete", "totalLength": "300000"])
            #expect((try await rpc.call("aria2.getUris", gid) as? [[String: String]])?.first?["uri"] == base.appendingPathComponent("a.bin").absoluteString)
            #expect((try await rpc.call("aria2.getFiles", gid) as? [[String: Any]])?.first?["selected"] as? String == "true")
            #expect((try await rpc.call("aria2.tellStopped", 0, 10, ["gid"]) as? [[String: String]]) == [["gid": gid]])
            #expect((try await rpc.call("aria2.tellActive") as? [Any])?.isEmpty == true)
            let stat = try #require(try await rpc.call("aria2.getGlobalStat") as? [String: String])
            #expect(stat["numStopped"] == "1" && stat["numActive"] == "0" && stat["numWaiting"] == "0")

            // An ordinary transfer of the session aria2; and one added elsewhere is an aria2 download too.
            let transfer = try #require(try await d.client.transfers().transfers.first)
            #expect(transfer.session == "aria2" && Aria2GID.gid(transfer.id) == gid)
            let other = try #require(try await d.client.createTransfers(.init(urls: [base.appendingPathComponent("a.bin").absoluteString], session: "cli", force: true)).transfers.first)
            try await eventually("the CLI's download") { try await d.client.transfer(other.id).state == .completed }
            #expect(try await rpc.status(Aria2GID.gid(other.id))["status"] as? String == "complete")

            // Results: one removed, then all.
            #expect(try await rpc.call("aria2.removeDownloadResult", gid) as? String == "OK")
            #expect(try await rpc.error("aria2.tellStatus", gid)["message"] as? String == "GID \(gid) is not found")
            #expect(try await rpc.call("aria2.purgeDownloadResult") as? String == "OK")
            #expect((try await rpc.call("aria2.tellStopped", 0, 10) as? [Any])?.isEmpty == true)
            #expect(FileManager.default.fileExists(atPath: path), "results go, files stay")
        }
    }

    @Test func pausedUnpausedAndRemoved() async throws {
        try await Self.withRPC { d, rpc, origin, base in
            // Slow enough to be running still when paused, however loaded the machine (at 400 kB/s a
            // full parallel run once saw it finishing by then).
            origin.serve("/slow.bin", Origin.File(data: Origin.bytes(4_000_000, seed: 4), bytesPerSecond: 100_000))
            let url = base.appendingPathComponent("slow.bin").absoluteString
            let paused = try #require(try await rpc.call("aria2.addUri", [url], ["pause": "true"]) as? String)
            #expect(try await rpc.status(paused)["status"] as? String == "paused")
            #expect((try await rpc.call("aria2.tellWaiting", 0, 10, ["gid", "status"]) as? [[String: String]]) == [["gid": paused, "status": "paused"]])
            #expect(try await rpc.error("aria2.unpause", "00000000000000ff")["message"] as? String == "GID 00000000000000ff is not found")
            #expect(try await rpc.call("aria2.unpause", paused) as? String == paused)
            try await eventually("active") { try await rpc.status(paused)["status"] as? String == "active" }
            #expect((try await rpc.call("aria2.tellActive", ["gid"]) as? [[String: String]]) == [["gid": paused]])
            #expect(try await rpc.error("aria2.unpause", paused)["message"] as? String == "GID#\(paused) cannot be unpaused now")
            #expect(try await rpc.call("aria2.forcePause", paused) as? String == paused)
            #expect(try await rpc.status(paused)["status"] as? String == "paused")
            #expect(try await rpc.call("aria2.unpauseAll") as? String == "OK")
            #expect(try await rpc.call("aria2.pauseAll") as? String == "OK")
            #expect(try await d.client.transfer(Aria2GID.id(paused)!).state == .paused)
            // The waiting list in the order downloads will start: one moved to the front comes first.
            let later = try #require(try await rpc.call("aria2.addUri", [url + "?later"], ["pause": "true"]) as? String)
            _ = try await d.client.update(Aria2GID.id(later)!, TransferUpdate(priority: .high))
            #expect((try await rpc.call("aria2.tellWaiting", 0, 10, ["gid"]) as? [[String: String]])?.map { $0["gid"] } == [later, paused])
            #expect(try await rpc.call("aria2.remove", paused) as? String == paused)
            #expect(try await rpc.status(paused)["status"] as? String == "removed")
            #expect(try await rpc.error("aria2.remove", paused)["message"] as? String == "Active Download not found for GID#\(paused)")
            #expect(try await rpc.error("aria2.pause", paused)["message"] as? String == "GID#\(paused) cannot be paused now")
        }
    }

    /// aria2's changePosition on the waiting list (queued and paused alike), checked with
    /// tellWaiting and with the order Ferry starts them in.
    @Test func changePositionPutsAWaitingDownloadExactlyWhereAsked() async throws {
        try await Self.withRPC { d, rpc, origin, base in
            var gids: [String] = []
            for n in 0..<5 {
                origin.serve("/w\(n).bin", Origin.File(data: Origin.bytes(1000, seed: UInt64(n))))
                gids.append(try #require(try await rpc.call("aria2.addUri", [base.appendingPathComponent("w\(n).bin").absoluteString], ["pause": "true"]) as? String))
            }
            func waiting() async throws -> [String] {
                try #require(try await rpc.call("aria2.tellWaiting", 0, 100, ["gid"]) as? [[String: String]]).compactMap { $0["gid"] }
            }
            #expect(try await waiting() == gids)
            let (a, b, c, dd, e) = (gids[0], gids[1], gids[2], gids[3], gids[4])
            #expect(try await rpc.call("aria2.changePosition", e, 1, "POS_SET") as? Int == 1)
            #expect(try await waiting() == [a, e, b, c, dd])
            #expect(try await rpc.call("aria2.changePosition", a, 2, "POS_CUR") as? Int == 2)
            #expect(try await waiting() == [e, b, a, c, dd])
            #expect(try await rpc.call("aria2.changePosition", e, -1, "POS_END") as? Int == 3)
            #expect(try await waiting() == [b, a, c, e, dd])
            #expect(try await rpc.call("aria2.changePosition", dd, -99, "POS_CUR") as? Int == 0)
            #expect(try await rpc.call("aria2.changePosition", b, 42, "POS_SET") as? Int == 4)
            #expect(try await waiting() == [dd, a, c, e, b])
            // Where it already is.
            #expect(try await rpc.call("aria2.changePosition", c, 0, "POS_CUR") as? Int == 2)
            #expect(try await waiting() == [dd, a, c, e, b])
            // Errors: the way, a download not waiting; nothing moved.
            #expect(try await rpc.error("aria2.changePosition", a, 0, "POS_NOWHERE")["message"] as? String == "Illegal argument.")
            #expect(try await rpc.error("aria2.changePosition", "00000000000000ff", 0, "POS_SET")["message"] as? String == "GID#00000000000000ff not found in the waiting queue.")
            #expect(try await rpc.error("aria2.changePosition", a, "first", "POS_SET")["code"] as? Int == 1)
            #expect(try await waiting() == [dd, a, c, e, b])
            // The queue runs in that order: with one at a time, unpaused all at once, they complete
            // in it (the origin's log says which was asked for first).
            #expect(try await rpc.call("aria2.changeGlobalOption", ["max-concurrent-downloads": "1"]) as? String == "OK")
            #expect(try await rpc.call("aria2.unpauseAll") as? String == "OK")
            try await eventually("all complete", timeout: .seconds(30)) {
                try await rpc.call("aria2.tellStopped", 0, 100, ["status"]) as? [[String: String]] == Array(repeating: ["status": "complete"], count: 5)
            }
            var asked: [String] = []
            for seen in origin.requests where !asked.contains(seen.path) { asked.append(seen.path) }
            #expect(asked == [dd, a, c, e, b].map { "/w\(gids.firstIndex(of: $0)!).bin" })
        }
    }

    @Test func aria2sErrorsAndNothingChanged() async throws {
        try await Self.withRPC { d, rpc, origin, base in
            origin.serve("/b.bin", Origin.File(data: Origin.bytes(1000, seed: 5)))
            let url = base.appendingPathComponent("b.bin").absoluteString
            // A wrong secret, and none.
            #expect(try await rpc.error("aria2.addUri", [url], token: "wrong") as NSDictionary == ["code": 1, "message": "Unauthorized"])
            let bare = try await rpc.post(#"{"jsonrpc": "2.0", "id": 1, "method": "aria2.getVersion", "params": []}"#)
            #expect(((bare.json as? [String: Any])?["error"] as? [String: Any])?["message"] as? String == "Unauthorized")
            // Not JSON, not a call, an unknown method, what Ferry does not do, bad parameters.
            let parse = try await rpc.post("{nope")
            #expect(parse.status == 500 && ((parse.json as? [String: Any])?["error"] as? [String: Any])?["code"] as? Int == -32700)
            let invalid = try await rpc.post(#"{"jsonrpc": "2.0", "id": 2, "params": []}"#)
            #expect(invalid.status == 400 && ((invalid.json as? [String: Any])?["error"] as? [String: Any])?["code"] as? Int == -32600)
            #expect(try await rpc.error("aria2.fly")["message"] as? String == "No such method: aria2.fly")
            #expect((try await rpc.error("aria2.addTorrent", "AAAA")["message"] as? String)?.contains("BitTorrent") == true)
            #expect(try await rpc.error("aria2.tellStatus", "zz")["message"] as? String == "Invalid GID zz")
            #expect(try await rpc.error("aria2.addUri", ["ftp://example.invalid/x"])["code"] as? Int == 1)
            #expect(try await rpc.error("aria2.addUri", [url], ["split": "0"])["message"] as? String == "We encountered a problem while processing the option '--split'.")
            #expect(try await rpc.error("aria2.addUri", [url], ["max-connection-per-server": "17"])["message"] as? String == "We encountered a problem while processing the option '--max-connection-per-server'.")
            #expect(try await rpc.error("aria2.addUri", [url], ["checksum": "sha-256=abc"])["code"] as? Int == 1)
            #expect(try await rpc.error("aria2.addUri", [url], ["out": "../x"])["code"] as? Int == 1)
            #expect(try await rpc.error("aria2.addUri", [url], ["http-passwd": "alone"])["message"] as? String == "The option '--http-passwd' goes with '--http-user'.")
            #expect(try await d.client.transfers().transfers.isEmpty, "no refused call added anything")

            // A batch: each call answered on its own, in order.
            let batch = try await rpc.post(#"[{"jsonrpc": "2.0", "id": "a", "method": "aria2.addUri", "params": ["token:\#(rpc.secret)", ["\#(url)"]]}, {"jsonrpc": "2.0", "id": "b", "method": "aria2.addUri", "params": ["token:bad", ["\#(url)"]]}, {"jsonrpc": "2.0", "id": "c", "method": "aria2.getVersion", "params": ["token:\#(rpc.secret)"]}]"#)
            let answers = try #require(batch.json as? [[String: Any]])
            #expect(answers.map { $0["id"] as? String } == ["a", "b", "c"])
            #expect(answers[0]["result"] is String && (answers[1]["error"] as? [String: Any])?["message"] as? String == "Unauthorized")
            #expect((answers[2]["result"] as? [String: Any])?["version"] as? String == "1.37.0")
            #expect(try await d.client.transfers().transfers.count == 1)
            // system.multicall: each result in a list of one, or its error object.
            let multicall = try await rpc.post(#"{"jsonrpc": "2.0", "id": "m", "method": "system.multicall", "params": [[{"methodName": "aria2.getGlobalStat", "params": ["token:\#(rpc.secret)"]}, {"methodName": "aria2.getGlobalStat", "params": ["token:x"]}]]}"#)
            let multi = try #require((multicall.json as? [String: Any])?["result"] as? [Any])
            #expect((multi[0] as? [Any])?.first is [String: Any] && (multi[1] as? [String: Any])?["message"] as? String == "Unauthorized")
            #expect((try await rpc.call("system.listMethods") as? [String])?.contains("aria2.tellStatus") == true)
            #expect((try await rpc.call("system.listNotifications") as? [String])?.contains("aria2.onDownloadComplete") == true)
            #expect((try await rpc.call("aria2.getSessionInfo") as? [String: String])?["sessionId"]?.count == 40)
            #expect(try await rpc.call("aria2.saveSession") as? String == "OK")
            // Web pages cannot reach it under another name.
            #expect(try await rpc.post(#"{"jsonrpc": "2.0", "id": 1, "method": "aria2.getVersion", "params": []}"#, host: "evil.example").status == 403)
        }
    }

    @Test func optionsOfADownloadAndOfTheDaemon() async throws {
        try await Self.withRPC { d, rpc, origin, base in
            let url = base.appendingPathComponent("o.bin").absoluteString
            let gid = try #require(try await rpc.call("aria2.addUri", [url], ["out": "o.bin", "split": "4", "max-download-limit": "512K", "header": "X-A: 1", "pause": "true"]) as? String)
            let options = try #require(try await rpc.call("aria2.getOption", gid) as? [String: String])
            #expect(options["out"] == "o.bin" && options["split"] == "4" && options["max-download-limit"] == "524288" && options["header"] == "X-A: 1")
            // aria2 takes any split; Ferry opens 16 connections at most.
            let many = try #require(try await rpc.call("aria2.addUri", [url + "?many"], ["split": "64", "pause": "true"]) as? String)
            #expect((try await rpc.call("aria2.getOption", many) as? [String: String])?["split"] == "16")
            #expect(options["dir"] == d.paths.library.appendingPathComponent("Downloads").path)

            let global = try #require(try await rpc.call("aria2.getGlobalOption") as? [String: String])
            #expect(global["max-overall-download-limit"] == "0" && global["dir"] == d.paths.library.appendingPathComponent("Downloads").path)
            #expect(try await rpc.call("aria2.changeGlobalOption", ["max-overall-download-limit": "1M", "max-concurrent-downloads": "2"]) as? String == "OK")
            let daemon = try await d.client.daemonConfiguration()
            #expect(daemon.bytesPerSecond == 1 << 20 && daemon.maxConcurrent == 2)
            #expect((try await rpc.call("aria2.getGlobalOption") as? [String: String])?["max-concurrent-downloads"] == "2")
            // Refused whole: an option Ferry does not change, a nonsense value.
            let unknown = try await rpc.error("aria2.changeGlobalOption", ["max-overall-download-limit": "2M", "log-level": "debug"])
            #expect((unknown["message"] as? String)?.contains("'--log-level'") == true)
            #expect(try await rpc.error("aria2.changeGlobalOption", ["max-concurrent-downloads": "lots"])["code"] as? Int == 1)
            #expect(try await d.client.daemonConfiguration().bytesPerSecond == 1 << 20)
            #expect(try await rpc.call("aria2.changeGlobalOption", ["max-overall-download-limit": "0"]) as? String == "OK")
            #expect(try await d.client.daemonConfiguration().bytesPerSecond == nil)
        }
    }

    /// aria2.changeOption: a running download's limit changes in place; its connections or
    /// headers start it again (as aria2 restarts one); what Ferry does not change is refused.
    @Test func changeOptionOfARunningAndAPausedDownload() async throws {
        try await Self.withRPC { d, rpc, origin, base in
            let data = Origin.bytes(3_000_000, seed: 12)
            origin.serve("/live.bin", Origin.File(data: data, bytesPerSecond: 600_000))
            let gid = try #require(try await rpc.call("aria2.addUri", [base.appendingPathComponent("live.bin").absoluteString], ["max-download-limit": "50K"]) as? String)
            let id = try #require(Aria2GID.id(gid))
            try await eventually("running") { try await d.client.transfer(id).bytesReceived > 0 }
            let attempts = try await d.client.transfer(id).attempts
            #expect(try await rpc.call("aria2.changeOption", gid, ["max-download-limit": "2M"]) as? String == "OK")
            #expect((try await rpc.call("aria2.getOption", gid) as? [String: String])?["max-download-limit"] == "2097152")
            // At 50 KB/s the 3 MB would take a minute; at the origin's 600 KB/s, five seconds.
            try await eventually("complete at the new limit", timeout: .seconds(30)) { try await rpc.status(gid)["status"] as? String == "complete" }
            #expect(try await d.client.transfer(id).attempts == attempts, "a new limit restarted the download")
            #expect(try Data(contentsOf: URL(fileURLWithPath: try #require(try await d.client.transfer(id).path))) == data)

            // Connections: it starts again, from what it has.
            let other = try #require(try await rpc.call("aria2.addUri", [base.appendingPathComponent("live.bin").absoluteString + "?2"], ["max-download-limit": "200K"]) as? String)
            let otherId = try #require(Aria2GID.id(other))
            try await eventually("running") { try await d.client.transfer(otherId).bytesReceived > 0 }
            let before = try await d.client.transfer(otherId).attempts
            #expect(try await rpc.call("aria2.changeOption", other, ["split": "2", "max-download-limit": "0", "header": ["X-New: yes"]]) as? String == "OK")
            let changed = try #require(try await rpc.call("aria2.getOption", other) as? [String: String])
            #expect(changed["split"] == "2" && changed["max-download-limit"] == nil && changed["header"] == "X-New: yes")
            try await eventually("complete", timeout: .seconds(30)) { try await rpc.status(other)["status"] as? String == "complete" }
            #expect(try await d.client.transfer(otherId).attempts > before)
            #expect(origin.requests.last { $0.path == "/live.bin" }?.headers["x-new"] == "yes")

            // Refused, nothing changed: an option Ferry does not change, a bad value, a stopped download.
            let paused = try #require(try await rpc.call("aria2.addUri", [base.appendingPathComponent("live.bin").absoluteString + "?3"], ["pause": "true", "header": ["X-A: 1", "X-B: 2"]]) as? String)
            let refused = try await rpc.error("aria2.changeOption", paused, ["dir": "/tmp", "split": "3"])
            #expect((refused["message"] as? String)?.contains("'--dir'") == true)
            #expect(try await rpc.error("aria2.changeOption", paused, ["split": "none"])["code"] as? Int == 1)
            #expect((try await rpc.call("aria2.getOption", paused) as? [String: String])?["split"] == nil)
            #expect(try await rpc.call("aria2.changeOption", paused, ["header": "X-C: 3"]) as? String == "OK")
            #expect((try await rpc.call("aria2.getOption", paused) as? [String: String])?["header"] == "X-C: 3")
            #expect(try await rpc.status(paused)["status"] as? String == "paused")
            #expect((try await rpc.error("aria2.changeOption", gid, ["split": "2"])["message"] as? String)?.hasPrefix("Cannot change option of GID#\(gid)") == true)
        }
    }

    /// aria2's `gid` option: the client's GID names the download everywhere (status, lists,
    /// calls); one taken, one of Ferry's own ids or one that is not a GID is refused, nothing added.
    @Test func aGIDChosenByTheClient() async throws {
        try await Self.withRPC { d, rpc, origin, base in
            origin.serve("/g.bin", Origin.File(data: Origin.bytes(200_000, seed: 21)))
            let url = base.appendingPathComponent("g.bin").absoluteString
            let chosen = "2089b05ecca3d829"
            #expect(try await rpc.call("aria2.addUri", [url], ["gid": chosen.uppercased()]) as? String == chosen)
            try await eventually("complete") { try await rpc.status(chosen)["status"] as? String == "complete" }
            #expect((try await rpc.call("aria2.tellStopped", 0, 10, ["gid"]) as? [[String: String]]) == [["gid": chosen]])
            let transfers = try await d.client.transfers(states: TransferState.allCases).transfers
            #expect(transfers.count == 1 && transfers[0].session == "aria2")
            // Ferry's own GID of it still finds it; the chosen one is what it is called.
            let own = Aria2GID.gid(transfers[0].id)
            #expect(try await rpc.status(own)["gid"] as? String == chosen)

            let before = try await d.client.transfers(states: TransferState.allCases).transfers.count
            #expect(try await rpc.error("aria2.addUri", [url], ["gid": chosen])["message"] as? String == "GID \(chosen) is not unique.")
            #expect((try await rpc.error("aria2.addUri", [url], ["gid": own])["message"] as? String)?.contains("Ferry's own") == true)
            #expect((try await rpc.error("aria2.addUri", [url], ["gid": "0000000000000000"])["message"] as? String)?.contains("Ferry's own") == true)
            #expect((try await rpc.error("aria2.addUri", [url], ["gid": "not-a-gid"])["message"] as? String)?.contains("16 hex digits") == true)
            #expect(try await d.client.transfers(states: TransferState.allCases).transfers.count == before)

            // Paused on request, then driven by its GID; removed, its GID is free again.
            let other = "ffffffffffffff01"
            #expect(try await rpc.call("aria2.addUri", [url + "?2"], ["gid": other, "pause": "true"]) as? String == other)
            #expect((try await rpc.call("aria2.tellWaiting", 0, 10, ["gid", "status"]) as? [[String: String]]) == [["gid": other, "status": "paused"]])
            #expect(try await rpc.call("aria2.forceRemove", other) as? String == other)
            #expect(try await rpc.error("aria2.tellStatus", other)["message"] as? String == "GID \(other) is not found")
            #expect(try await rpc.call("aria2.addUri", [url + "?3"], ["gid": other, "pause": "true"]) as? String == other)
        }
    }

    @Test func ferrysEventsAreAria2sNotifications() throws {
        let completed = try #require(Aria2Notifications.message(TransferEvent(kind: .completed, transferId: 26, session: "aria2"), gid: Aria2GID.gid(26)))
        let object = try #require(try JSONSerialization.jsonObject(with: completed) as? [String: Any])
        #expect(object["jsonrpc"] as? String == "2.0" && object["method"] as? String == "aria2.onDownloadComplete" && object["id"] == nil)
        #expect(object["params"] as? [[String: String]] == [["gid": "000000000000001a"]])
        let methods = TransferEvent.Kind.allCases.compactMap(Aria2Notifications.method(for:))
        #expect(Set(methods) == ["aria2.onDownloadStart", "aria2.onDownloadPause", "aria2.onDownloadStop", "aria2.onDownloadComplete", "aria2.onDownloadError"])
        #expect(Aria2Notifications.message(TransferEvent(kind: .progress, transferId: 26, session: "aria2"), gid: Aria2GID.gid(26)) == nil)
    }

    @Test func aria2sPagesOfWaitingAndStoppedDownloads() {
        let items = Array(1...5)
        #expect(Aria2RPC.page(items, offset: 0, count: 2) == [1, 2])
        #expect(Aria2RPC.page(items, offset: 3, count: 10) == [4, 5])
        #expect(Aria2RPC.page(items, offset: 9, count: 2) == [])
        #expect(Aria2RPC.page(items, offset: -1, count: 2) == [5, 4])
        #expect(Aria2RPC.page(items, offset: -4, count: 3) == [2, 1])
        #expect(Aria2RPC.page(items, offset: 0, count: 0) == [])
    }

    /// AriaNg's "HTTP user" and "HTTP password": the server's challenge answered (Digest here,
    /// which aria2 itself does not speak), the password never read back.
    @Test func httpUserAndPassword() async throws {
        try await Self.withRPC { d, rpc, origin, base in
            let file = Origin.File(data: Origin.bytes(20_000, seed: 9))
            origin.serve("/private.bin", file)
            origin.protect("/private.bin", OriginLogin([.digestSHA256], user: "ann", password: "aria-secret"))
            let url = base.appendingPathComponent("private.bin").absoluteString
            let gid = try #require(try await rpc.call("aria2.addUri", [url], ["http-user": "ann", "http-passwd": "aria-secret"]) as? String)
            try await eventually("the download to complete") { try await rpc.call("aria2.tellStatus", gid, ["status"]) as? [String: String] == ["status": "complete"] }
            #expect(origin.requests(for: "/private.bin").last?.authorization?.contains("algorithm=SHA-256") == true)
            let transfer = try #require(try await d.client.transfers().transfers.first)
            #expect(transfer.sha256 == file.sha256 && transfer.options?.password == "<redacted>")
            let options = try await rpc.call("aria2.getOption", gid)
            #expect(!String(describing: options).contains("aria-secret"))
        }
    }
}
