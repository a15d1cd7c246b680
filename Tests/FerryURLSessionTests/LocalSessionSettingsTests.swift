import FerryTestSupport
import FerryURLSession
import Synchronization
import Testing

/// The configuration's properties that shape a local session's requests, each seen from the
/// server's side (or a real proxy's): extra headers, connections per host, the two timeouts,
/// the proxy dictionary; and invalidateAndCancel ending every task.
@Suite struct LocalSessionSettingsTests {
    @Test func additionalHeadersGoWithEveryRequestAndTheRequestsOwnWin() async throws {
        try await Origin.run { origin, base in
            origin.serve("/a", .init(data: Data("a".utf8)))
            let configuration = URLSessionConfiguration.ephemeral
            configuration.httpAdditionalHeaders = ["X-App": "HalfTunes", "Accept-Language": "de", "User-Agent": "HalfTunes/1.0"]
            let session = URLSession(configuration: configuration)
            var request = URLRequest(url: base.appendingPathComponent("a"))
            request.setValue("fr", forHTTPHeaderField: "Accept-Language")
            _ = try await session.data(for: request)
            let seen = try #require(origin.requests(for: "/a").last)
            #expect(seen.headers["x-app"] == "HalfTunes")
            #expect(seen.headers["user-agent"] == "HalfTunes/1.0")
            #expect(seen.headers["accept-language"] == "fr", "the request's own header wins, as Apple documents")
        }
    }

    @Test(arguments: [1, 3])
    func noMoreConnectionsToAHostThanTheConfigurationAllows(limit: Int) async throws {
        try await Origin.run { origin, base in
            // A second each: every connection allowed is open long before the first ends, however loaded the machine.
            origin.serve("/slow", .init(data: Origin.bytes(512 << 10), bytesPerSecond: 512 << 10))
            let configuration = URLSessionConfiguration.ephemeral
            configuration.httpMaximumConnectionsPerHost = limit
            let recorder = Recorder()
            let session = URLSession(configuration: configuration, delegate: recorder, delegateQueue: nil)
            recorder.session = session
            let tasks = (0..<5).map { _ in session.downloadTask(with: base.appendingPathComponent("slow")) }
            for task in tasks { task.resume() }
            for task in tasks { await recorder.end(of: task) }
            #expect(tasks.allSatisfy { recorder.calls($0).last?.error == nil })
            #expect(origin.peakConcurrency == limit, "five tasks, \(limit) at a time")
        }
    }

    @Test func aServerThatGoesQuietTimesOutAndASlowOneMeetsTheResourceLimit() async throws {
        try await Origin.run { origin, base in
            origin.serve("/quiet", .init(data: Origin.bytes(64 << 10)))
            origin.script("/quiet", [.stallAfter(1024, .seconds(10))])
            origin.serve("/slow", .init(data: Origin.bytes(1 << 20), bytesPerSecond: 128 << 10))
            let recorder = Recorder()
            let quick = URLSessionConfiguration.ephemeral
            quick.timeoutIntervalForRequest = 0.5
            let session = URLSession(configuration: quick, delegate: recorder, delegateQueue: nil)
            recorder.session = session
            let quiet = session.dataTask(with: base.appendingPathComponent("quiet"))
            let started = ContinuousClock.now
            quiet.resume()
            await recorder.end(of: quiet)
            #expect(recorder.calls(quiet).last?.error?.code == .timedOut)
            #expect(origin.requests(for: "/quiet").count == 1, "it was asked: the connection itself had time")
            #expect(ContinuousClock.now - started < .seconds(8), "the quiet server's ten seconds were not waited out")

            let bounded = URLSessionConfiguration.ephemeral
            bounded.timeoutIntervalForResource = 1
            let slowRecorder = Recorder()  // identifiers are per session: this one's first is 1 too
            let other = URLSession(configuration: bounded, delegate: slowRecorder, delegateQueue: nil)
            slowRecorder.session = other
            let slow = other.downloadTask(with: base.appendingPathComponent("slow"))
            slow.resume()
            await slowRecorder.end(of: slow)
            // (Before, the limit bounded connecting only: this download ran its eight seconds to the end.)
            #expect(slowRecorder.calls(slow).last?.error?.code == .timedOut, "eight seconds of bytes, one allowed")
        }
    }

    @Test(.enabled(if: ProxyProcess.program(.http) != nil, "tinyproxy is not installed (Debian: tinyproxy)"))
    func theProxyDictionarySendsRequestsThroughTheProxyWithItsLogin() async throws {
        try await withTemporaryDirectory { folder in
            try await Origin.run { origin, base in
                origin.serve("/via-proxy", .init(data: Data("proxied".utf8)))
                let proxy = try await ProxyProcess(.http, folder: folder, connectPorts: [base.port!])
                func session(password: String) -> URLSession {
                    let configuration = URLSessionConfiguration.ephemeral
                    configuration.connectionProxyDictionary = [
                        "HTTPEnable": 1, "HTTPProxy": "127.0.0.1", "HTTPPort": proxy.port,
                        "kCFProxyUsernameKey": ProxyProcess.user, "kCFProxyPasswordKey": password,
                    ]
                    return URLSession(configuration: configuration)
                }
                let (data, response) = try await session(password: ProxyProcess.password).data(from: base.appendingPathComponent("via-proxy"))
                #expect(data == Data("proxied".utf8))
                #expect((response as? HTTPURLResponse)?.statusCode == 200)
                #expect(proxy.logText.contains("CONNECT 127.0.0.1:\(base.port!)"), "the proxy carried it (a tunnel, as AsyncHTTPClient asks)")

                await #expect {
                    _ = try await session(password: "wrong").data(from: base.appendingPathComponent("via-proxy"))
                } throws: { error in
                    // tinyproxy refuses a tunnel with a wrong login without a 407.
                    (error as? URLError)?.code == .cannotConnectToHost && error.localizedDescription.contains("proxy refused")
                }
                #expect(origin.requests(for: "/via-proxy").count == 1, "nothing more reached the server")
            }
        }
    }

    @Test(.enabled(if: ProxyProcess.program(.socks5) != nil, "dante-server is not installed (Debian: dante-server)"))
    func aSocksProxyInTheDictionaryCarriesTheRequest() async throws {
        try await withTemporaryDirectory { folder in
            try await Origin.run { origin, base in
                origin.serve("/socks", .init(data: Data("through socks".utf8)))
                let proxy = try await ProxyProcess(.socks5, folder: folder)
                let configuration = URLSessionConfiguration.ephemeral
                configuration.connectionProxyDictionary = ["SOCKSEnable": 1, "SOCKSProxy": "127.0.0.1", "SOCKSPort": proxy.port]
                let (data, _) = try await URLSession(configuration: configuration).data(from: base.appendingPathComponent("socks"))
                #expect(data == Data("through socks".utf8))
                try await eventually("dante to log the connection") { proxy.logText.contains("\(base.port!)") }
            }
        }
    }

    @Test func invalidateAndCancelEndsEveryTaskCancelledThenTheSession() async throws {
        try await Origin.run { origin, base in
            let held = Origin.Gate()
            origin.serve("/held", .init(data: Origin.bytes(256 << 10)))
            origin.script("/held", [.holdAfter(1024, held)])
            let recorder = Recorder()
            let session = URLSession(configuration: .ephemeral, delegate: recorder, delegateQueue: nil)
            recorder.session = session
            let download = session.downloadTask(with: base.appendingPathComponent("held"))
            let data = session.dataTask(with: base.appendingPathComponent("held"))
            let neverResumed = session.dataTask(with: base.appendingPathComponent("held"))
            download.resume()
            data.resume()
            try await eventually("both asked") { origin.requests(for: "/held").count == 2 }
            session.invalidateAndCancel()
            for task in [download, data, neverResumed] { await recorder.end(of: task) }
            held.open()
            #expect([download, data, neverResumed].allSatisfy { recorder.calls($0).last?.error?.code == .cancelled })
            #expect(recorder.calls(download).last?.error?.downloadTaskResumeData == nil, "cancel() keeps nothing")
            let leftovers = try FileManager.default.contentsOfDirectory(atPath: NSTemporaryDirectory()).filter { $0.hasPrefix("FerryURLSession_") }
            let mine = leftovers.filter { name in
                (try? FileManager.default.attributesOfItem(atPath: NSTemporaryDirectory() + "/" + name)[.size] as? NSNumber)?.intValue == 1024
            }
            #expect(mine.isEmpty, "the cancelled download's kilobyte is not left in the temporary folder")
            try await eventually("the session to say it is invalid") { recorder.calls.withLock { $0.last?.name } == "didBecomeInvalid" }
            #expect(recorder.calls.withLock { $0.filter { $0.name == "didBecomeInvalid" }.count } == 1)
            #expect(session.delegate == nil, "the delegate is let go")
        }
    }
}
