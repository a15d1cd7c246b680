import FerryKit
import FerryServer
import FerryTestSupport
import Foundation
import Hummingbird
import ServiceLifecycle
import Synchronization
import Testing

/// When a transfer ends, the hooks, the webhook and the notification a session asked for: a hook
/// gets the transfer in its environment (a file name with quotes, `$(…)` and a newline arrives
/// intact and no shell runs it), a hook that hangs is killed with what it started and changes
/// nothing, a failure runs --on-fail, the web app's login cannot set hooks, and a webhook
/// receiver that is down at first still gets the POST.
@Suite struct AnnouncementTests {
    static func waitForFile(_ url: URL, timeout: Duration = .seconds(20)) async throws -> String {
        try await eventually("\(url.lastPathComponent) to be written", timeout: timeout) {
            FileManager.default.fileExists(atPath: url.path) && ((try? String(contentsOf: url, encoding: .utf8))?.hasSuffix("END") ?? false)
        }
        return try String(contentsOf: url, encoding: .utf8)
    }

    @Test func aHookGetsTheTransferIntactAndNoShellRunsItsName() async throws {
        let data = Origin.bytes(20_000)
        try await Origin.run { origin, base in
            origin.serve("/f", .init(data: data))
            try await withTemporaryDirectory { home in
                let out = home.appendingPathComponent("out")
                try FileManager.default.createDirectory(at: out, withIntermediateDirectories: true)
                let record = home.appendingPathComponent("hook.txt")
                let pwned = home.appendingPathComponent("PWNED")
                try await DaemonHarness.run(home: home) { d in
                    // The command is the user's; the name only ever arrives as data.
                    // In the test's folder: were the name ever run, PWNED would appear there.
                    let hook = "cd '\(home.path)' && printf '%s|%s|%s|%s|END' \"$FERRY_ID\" \"$FERRY_STATE\" \"$FERRY_SHA256\" \"$FERRY_PATH\" > '\(record.path)'"
                    _ = try await d.client.updateSessionConfiguration("hooks", .init(set: TransferOptions(onComplete: hook)))
                    let name = "a \"quoted\" 'name' $(touch PWNED) `touch PWNED` ;touch PWNED\nline two.bin"
                    let created = try await d.client.createTransfers(
                        .init(urls: [base.appendingPathComponent("f").absoluteString], session: "hooks", directory: out.path, filename: name)
                    )
                    let id = created.transfers[0].id
                    let written = try await Self.waitForFile(record)
                    #expect(written == "\(id)|completed|\(Origin.sha256(data))|\(out.appendingPathComponent(name).path)|END")
                    #expect(!FileManager.default.fileExists(atPath: pwned.path))
                    #expect(try await d.client.transfer(id).state == .completed)
                }
            }
        }
    }

    /// A hook that hangs is killed after the timeout with everything it started; the transfer
    /// stays completed. A failed transfer runs --on-fail with its error.
    @Test func aHangingHookIsKilledAndAFailureRunsOnFail() async throws {
        try await Origin.run { origin, base in
            origin.serve("/f", .init(data: Origin.bytes(5_000)))
            try await withTemporaryDirectory { home in
                let pids = home.appendingPathComponent("pids")
                let failed = home.appendingPathComponent("failed.txt")
                try await DaemonHarness.run(home: home, configure: { $0.hookTimeout = .seconds(1) }) { d in
                    let hang = "echo $$ > '\(pids.path)'; sleep 300 & echo $! >> '\(pids.path)'; wait"
                    let onFail = "printf '%s|%s|END' \"$FERRY_STATE\" \"$FERRY_ERROR\" > '\(failed.path)'"
                    _ = try await d.client.updateDaemonConfiguration(.init(set: TransferOptions(onComplete: hang, onFail: onFail)))
                    let ok = try await d.client.createTransfers(.init(urls: [base.appendingPathComponent("f").absoluteString])).transfers[0]
                    try await eventually("the hook's pids") { ((try? String(contentsOf: pids, encoding: .utf8)) ?? "").split(separator: "\n").count == 2 }
                    let started = try String(contentsOf: pids, encoding: .utf8).split(separator: "\n").compactMap { Int32($0) }
                    try await eventually("the hook and its child to be killed", timeout: .seconds(10)) {
                        started.allSatisfy { kill($0, 0) != 0 }
                    }
                    #expect(try await d.client.transfer(ok.id).state == .completed)
                    let missing = try await d.client.createTransfers(.init(urls: [base.appendingPathComponent("missing").absoluteString])).transfers[0]
                    let text = try await Self.waitForFile(failed)
                    #expect(text.hasPrefix("failed|The server answered 404"), "\(text)")
                    #expect(try await d.client.transfer(missing.id).state == .failed)
                }
            }
        }
    }

    /// Hooks run commands: the web app's login may neither set nor clear them; the token may.
    @Test func theWebLoginCannotSetHooks() async throws {
        try await withTemporaryDirectory { home in
            try await DaemonHarness.run(home: home) { d in
                let cookie = try await d.webCookie()
                let headers = [("Cookie", cookie), ("Content-Type", "application/json"), ("Origin", d.baseURL)]
                for body in [#"{"set": {"onComplete": "touch /tmp/x"}}"#, #"{"set": {"notifyURL": "http://127.0.0.1:9/x"}}"#, #"{"clear": ["onFail"]}"#] {
                    let session = try await d.raw(.PATCH, "/v1/sessions/web/config", headers: headers, authorized: false, body: body)
                    #expect(session.status == 403, "\(body): \(session.body)")
                    let daemon = try await d.raw(.PATCH, "/v1/config", headers: headers, authorized: false, body: body)
                    #expect(daemon.status == 403)
                }
                // Other options are the web app's to set.
                let rate = try await d.raw(.PATCH, "/v1/sessions/web/config", headers: headers, authorized: false, body: #"{"set": {"bytesPerSecond": 100000}}"#)
                #expect(rate.status == 200)
                #expect(try await d.client.sessionConfiguration("web").options.onComplete == nil)
                #expect(try await d.client.daemonConfiguration().onComplete == nil)
                // Not per transfer either.
                await #expect(throws: FerryError.self) {
                    try await d.client.createTransfers(.init(urls: ["http://127.0.0.1:9/x"], options: TransferOptions(onComplete: "true")))
                }
            }
        }
    }

    /// `ferry serve --no-hooks`: even the token cannot set a hook, and other options still go.
    @Test func aDaemonWithoutHooksRefusesThem() async throws {
        try await withTemporaryDirectory { home in
            try await DaemonHarness.run(home: home, configure: { $0.hooksEnabled = false }) { d in
                await #expect(throws: FerryError.self) {
                    try await d.client.updateDaemonConfiguration(.init(set: TransferOptions(onComplete: "true")))
                }
                let refused = try await d.raw(.PATCH, "/v1/sessions/x/config", headers: [("Content-Type", "application/json")], body: #"{"set": {"launch": ["/bin/true"]}}"#)
                #expect(refused.status == 403 && refused.body.contains("--no-hooks"))
                _ = try await d.client.updateDaemonConfiguration(.init(set: TransferOptions(bytesPerSecond: 100_000)))
            }
        }
    }

    /// A webhook receiver that answers 503 twice (down) gets the transfer on the third try.
    @Test func aWebhookIsTriedAgainUntilItsReceiverIsUp() async throws {
        let received = ReceivedPosts()
        let router = Router()
        router.post("/done") { request, _ -> Response in
            let body = try await request.body.collect(upTo: 1 << 20)
            let attempt = received.add(String(buffer: body))
            return Response(status: attempt <= 2 ? .serviceUnavailable : .ok)
        }
        let receiver = Application(router: router, configuration: .init(address: .hostname("127.0.0.1", port: 0)))
        try await receiver.test(.live) { hookClient in
            try await Origin.run { origin, base in
                origin.serve("/f", .init(data: Origin.bytes(1_000)))
                try await withTemporaryDirectory { home in
                    try await DaemonHarness.run(home: home, configure: { $0.webhookDelays = [.milliseconds(100), .milliseconds(200), .milliseconds(400)] }) { d in
                        let url = "http://127.0.0.1:\(hookClient.port!)/done"
                        _ = try await d.client.updateSessionConfiguration("cli", .init(set: TransferOptions(notifyURL: url)))
                        let t = try await d.client.createTransfers(.init(urls: [base.appendingPathComponent("f").absoluteString])).transfers[0]
                        try await eventually("three posts") { received.count == 3 }
                        let payload = try FerryJSON.decoder().decode(WebhookPayload.self, from: Data(received.last.utf8))
                        #expect(payload.event == .completed)
                        #expect(payload.transfer.id == t.id && payload.transfer.sha256 == Origin.sha256(Origin.bytes(1_000)))
                        try await Task.sleep(for: .seconds(1))
                        #expect(received.count == 3, "no more after a 200")
                    }
                }
            }
        }
    }

    /// A receiver that is not there at all (its port refuses connections) when the transfer
    /// ends, and comes up a second later, still gets the POST.
    @Test func aWebhookReachesAReceiverThatWasDown() async throws {
        let received = ReceivedPosts()
        let refusing = try RefusingPort()  // Bound, not listening: refused until it is released.
        let port = refusing.port
        do {
            try await Origin.run { origin, base in
                origin.serve("/f", .init(data: Origin.bytes(1_000)))
                try await withTemporaryDirectory { home in
                    try await DaemonHarness.run(home: home, configure: { $0.webhookDelays = [.milliseconds(300), .milliseconds(600), .seconds(1), .seconds(2)] }) { d in
                        _ = try await d.client.updateSessionConfiguration("cli", .init(set: TransferOptions(notifyURL: "http://127.0.0.1:\(port)/done")))
                        let t = try await d.client.createTransfers(.init(urls: [base.appendingPathComponent("f").absoluteString])).transfers[0]
                        try await eventually("completed") { try await d.client.transfer(t.id).state == .completed }
                        try await Task.sleep(for: .milliseconds(500))  // An attempt or two refused.
                        refusing.release()
                        let router = Router()
                        router.post("/done") { request, _ -> Response in
                            _ = received.add(String(buffer: try await request.body.collect(upTo: 1 << 20)))
                            return Response(status: .ok)
                        }
                        // On the refused port itself (a live test application would take a free one).
                        let receiver = Application(
                            router: router, configuration: .init(address: .hostname("127.0.0.1", port: port)), logger: testLogger("receiver")
                        )
                        let group = ServiceGroup(services: [receiver], logger: testLogger("receiver"))
                        try await withThrowingTaskGroup(of: Void.self) { tasks in
                            tasks.addTask { try await group.run() }
                            try await eventually("the POST", timeout: .seconds(10)) { received.count == 1 }
                            await group.triggerGracefulShutdown()
                            try await tasks.waitForAll()
                        }
                        let payload = try FerryJSON.decoder().decode(WebhookPayload.self, from: Data(received.last.utf8))
                        #expect(payload.transfer.id == t.id && payload.event == .completed)
                    }
                }
            }
        }
    }

    struct WebhookPayload: Decodable {
        var event: TransferEvent.Kind
        var transfer: Transfer
    }

    final class ReceivedPosts: Sendable {
        private let bodies = Mutex<[String]>([])
        func add(_ body: String) -> Int { bodies.withLock { $0.append(body); return $0.count } }
        var count: Int { bodies.withLock { $0.count } }
        var last: String { bodies.withLock { $0.last ?? "" } }
    }
}
