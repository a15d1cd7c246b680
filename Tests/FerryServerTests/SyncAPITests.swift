import AsyncHTTPClient
import FerryCore
import FerryKit
import FerryServer
import FerryTestSupport
import Foundation
import NIOCore
import NIOHTTP1
import Testing

/// The gpodder.net API on the sync listener, as AntennaPod, gPodder and Kasts use it: login,
/// devices, subscriptions with `since` deltas, episode actions both ways, and what it refuses.
@Suite struct SyncAPITests {
    /// A phone's requests to the sync listener.
    struct Phone {
        let base: String
        let http: HTTPClient
        var user = "alice", password = "correct horse"
        var cookie: String?

        func send(_ method: HTTPMethod, _ path: String, json: String? = nil, credentials: Bool = true) async throws -> (status: Int, body: String, headers: HTTPHeaders) {
            var request = HTTPClientRequest(url: base + path)
            request.method = method
            if let cookie {
                request.headers.add(name: "Cookie", value: cookie)
            } else if credentials {
                request.headers.add(name: "Authorization", value: "Basic " + Data("\(user):\(password)".utf8).base64EncodedString())
            }
            if let json { request.body = .bytes(ByteBuffer(string: json)) }
            let response = try await http.execute(request, timeout: .seconds(30))
            let bytes = try await response.body.collect(upTo: 1 << 20)
            return (Int(response.status.code), String(buffer: bytes), response.headers)
        }

        func json(_ method: HTTPMethod, _ path: String, _ body: String? = nil) async throws -> Any {
            let answer = try await send(method, path, json: body)
            guard answer.status == 200 else { throw TestFailure("\(method) \(path): \(answer.status) \(answer.body)") }
            return try JSONSerialization.jsonObject(with: Data(answer.body.utf8), options: .fragmentsAllowed)
        }
    }

    static func withPhone(
        origin: Origin, base: URL, tls: Bool = false, _ body: @Sendable (DaemonHarness, Phone) async throws -> Void
    ) async throws {
        try await withTemporaryDirectory { home in
            try await DaemonHarness.run(home: home, configure: { configuration in
                let folder = Origin.certificatesFolder()
                configuration.sync = tls
                    ? SyncListener(host: "127.0.0.1", port: 0, certificate: folder.appendingPathComponent("localhost.crt").path, key: folder.appendingPathComponent("localhost.key").path)
                    : SyncListener(host: "127.0.0.1", port: 0)
            }) { d in
                try await eventually("the sync listener") { d.daemon.syncAddress.url != nil }
                let http = try makeTestHTTPClient(trustTestCertificate: tls)
                do {
                    try await body(d, Phone(base: d.daemon.syncAddress.url!.replacingOccurrences(of: "127.0.0.1", with: tls ? "localhost" : "127.0.0.1"), http: http))
                } catch {
                    try? await http.shutdown()
                    throw error
                }
                try await http.shutdown()
            }
        }
    }

    @Test func usersDevicesAndLogin() async throws {
        try await Origin.run { origin, base in
            try await Self.withPhone(origin: origin, base: base) { d, phone in
                // Users are made with the API token, never with the web app's login; bad ones refused.
                #expect(try await d.client.syncUsers().users.isEmpty)
                try await d.client.setSyncUser("alice", password: "correct horse")
                #expect(try await d.client.syncUsers().users.map(\.name) == ["alice"])
                #expect(try await d.client.syncUsers().url == d.daemon.syncAddress.url)
                let short = try await d.raw(.POST, "/v1/sync/users", body: #"{"name": "bob", "password": "short"}"#)
                #expect(short.status == 400 && short.body.contains("8 to 1,024"), "\(short.body)")
                let badName = try await d.raw(.POST, "/v1/sync/users", body: #"{"name": "../bob", "password": "long enough"}"#)
                #expect(badName.status == 400, "\(badName.body)")
                // Sync users are accounts: an admin (this machine's web login is one) adds them, a member may not.
                let cookie = try await d.webCookie()
                let fromWeb = try await d.raw(.POST, "/v1/sync/users", headers: [("Cookie", cookie)], authorized: false, body: #"{"name": "eve", "password": "long enough"}"#)
                #expect(fromWeb.status == 201, "\(fromWeb.body)")
                let member = DaemonClient(baseURL: d.baseURL, token: try await d.client.makeUserToken("alice").token)
                await #expect(throws: FerryError.self) { try await member.setSyncUser("mallory", password: "long enough") }
                #expect(try await d.client.syncUsers().users.map(\.name) == ["alice", "eve"])
                try await d.client.removeSyncUser("eve")

                // No credentials: a challenge, which urllib-based clients answer.
                let anonymous = try await phone.send(.GET, "/api/2/devices/alice.json", credentials: false)
                #expect(anonymous.status == 401)
                #expect(anonymous.headers.first(name: "WWW-Authenticate") == #"Basic realm="Ferry sync""#)
                var wrong = phone
                wrong.password = "wrong horse"
                let refused = try await wrong.send(.POST, "/api/2/devices/alice/phone.json", json: #"{"caption": "Mallory", "type": "mobile"}"#)
                #expect(refused.status == 401)
                #expect(try await d.client.syncUsers().users.first?.devices == 0, "a refused request changes nothing")
                let unknown = try await Phone(base: phone.base, http: phone.http, user: "nobody").send(.GET, "/api/2/devices/nobody.json")
                #expect(unknown.status == 401)

                // Login gives a session cookie that stands for the credentials.
                let login = try await phone.send(.POST, "/api/2/auth/alice/login.json")
                #expect(login.status == 200)
                let setCookie = try #require(login.headers.first(name: "Set-Cookie"))
                #expect(setCookie.hasPrefix("sessionid=") && setCookie.contains("HttpOnly"))
                var session = phone
                session.cookie = String(setCookie.split(separator: ";")[0])
                #expect((try await session.json(.GET, "/api/2/devices/alice.json") as? [Any])?.isEmpty == true)
                #expect(try await session.send(.POST, "/api/2/devices/alice/phone.json", json: #"{"caption": "Alice's phone", "type": "mobile"}"#).status == 200)
                let devices = try #require(try await phone.json(.GET, "/api/2/devices/alice.json") as? [[String: Any]])
                #expect(devices.count == 1)
                #expect(devices.first?["id"] as? String == "phone" && devices.first?["caption"] as? String == "Alice's phone")
                #expect(devices.first?["type"] as? String == "mobile" && devices.first?["subscriptions"] as? Int == 0)
                #expect(try await d.client.syncUsers().users.first?.devices == 1)
                let badType = try await phone.send(.POST, "/api/2/devices/alice/phone.json", json: #"{"type": "toaster"}"#)
                #expect(badType.status == 400, "\(badType.body)")
                // Credentials that pass get a session too, as on gpodder.net (mygpoclient counts on it); a session needs no new one.
                let basic = try await phone.send(.GET, "/api/2/devices/alice.json")
                #expect(basic.headers.first(name: "Set-Cookie")?.hasPrefix("sessionid=") == true)
                #expect(try await session.send(.GET, "/api/2/devices/alice.json").headers.first(name: "Set-Cookie") == nil)
                #expect(try await session.send(.POST, "/api/2/auth/alice/logout.json").status == 200)
                #expect(try await session.send(.GET, "/api/2/devices/alice.json").status == 401)

                // Someone else's data, and anything that is not a sync path.
                try await d.client.setSyncUser("bob", password: "bob's password")
                #expect(try await phone.send(.GET, "/api/2/devices/bob.json").status == 403)
                #expect(try await phone.send(.GET, "/v1/status").status == 404)
                #expect(try await phone.send(.GET, "/").status == 404)
                #expect(try await phone.send(.GET, "/api/2/devices/alice.xml").status == 404)
                try await d.client.removeSyncUser("bob")
                #expect(try await Phone(base: phone.base, http: phone.http, user: "bob", password: "bob's password").send(.GET, "/api/2/devices/bob.json").status == 401)
            }
        }
    }

    @Test func subscriptionsGoBothWays() async throws {
        try await Origin.run { origin, base in
            _ = PodcastAPITests.serveMedia(origin)
            origin.serve("/a.xml", .init(data: PodcastAPITests.feed(base, title: "Show A").data))
            origin.serve("/b.xml", .init(data: PodcastAPITests.feed(base, title: "Show B").data))
            let (a, b) = (base.appendingPathComponent("a.xml").absoluteString, base.appendingPathComponent("b.xml").absoluteString)
            try await Self.withPhone(origin: origin, base: base) { d, phone in
                try await d.client.setSyncUser("alice", password: "correct horse")
                // Alice's web app (her token: the same places as her login) and her phone.
                let alice = DaemonClient(baseURL: d.baseURL, token: try await d.client.makeUserToken("alice").token)
                let showA = try await alice.subscribe(url: a)

                // A first sync: everything Ferry has.
                let first = try #require(try await phone.json(.GET, "/api/2/subscriptions/alice/phone.json") as? [String: Any])
                #expect(first["add"] as? [String] == [a] && first["remove"] as? [String] == [])
                let since = try #require(first["timestamp"] as? Int)

                // The phone adds B (with stray spaces) and removes A; a URL that is no feed's comes back empty.
                let upload = try #require(try await phone.json(.POST, "/api/2/subscriptions/alice/phone.json", #"{"add": [" \#(b) ", "ftp://x/y"], "remove": ["\#(a)"]}"#) as? [String: Any])
                #expect(upload["timestamp"] as? Int ?? 0 >= since)
                #expect(upload["update_urls"] as? [[String]] == [[" \(b) ", b], ["ftp://x/y", ""]])
                try await eventually("Show B subscribed in Ferry") { try await alice.podcasts().map(\.title) == ["Show B"] }
                #expect(try await alice.podcasts().first?.feedURL == b)
                // Its files stay: unsubscribing from the phone never deletes them.
                _ = showA

                // What changed since the first sync.
                let delta = try #require(try await phone.json(.GET, "/api/2/subscriptions/alice/phone.json?since=\(since)") as? [String: Any])
                #expect(delta["add"] as? [String] == [b] && delta["remove"] as? [String] == [a])
                // The simple API's lists.
                #expect(try await phone.json(.GET, "/subscriptions/alice/phone.json") as? [String] == [b])
                let text = try await phone.send(.GET, "/subscriptions/alice.txt")
                #expect(text.status == 200 && text.body == b + "\n")
                let opml = try await phone.send(.GET, "/subscriptions/alice/phone.opml")
                #expect(opml.status == 200 && opml.body.contains(#"xmlUrl="\#(b)""#))

                // Refused, nothing changed: the same URL added and removed, and bodies that are not lists of URLs.
                let both = try await phone.send(.POST, "/api/2/subscriptions/alice/phone.json", json: #"{"add": ["\#(a)"], "remove": ["\#(a)"]}"#)
                #expect(both.status == 400 && both.body.contains("both added and removed"), "\(both.body)")
                for bad in [#"{"add": "\#(a)"}"#, #"{"add": [1, 2]}"#, "[", ""] {
                    #expect(try await phone.send(.POST, "/api/2/subscriptions/alice/phone.json", json: bad).status == 400, "\(bad)")
                }
                #expect(try await phone.send(.GET, "/api/2/subscriptions/alice/phone.json?since=yesterday").status == 400)
                #expect(try await alice.podcasts().map(\.feedURL) == [b])
                let feeds = try #require(try await phone.json(.GET, "/api/2/subscriptions/alice/phone.json") as? [String: Any])
                #expect(feeds["add"] as? [String] == [b])
            }
        }
    }

    @Test func positionsGoBothWays() async throws {
        try await Origin.run { origin, base in
            _ = PodcastAPITests.serveMedia(origin)
            origin.serve("/feed.xml", .init(data: PodcastAPITests.feed(base).data))
            let feed = base.appendingPathComponent("feed.xml").absoluteString
            let media: @Sendable (Int) -> String = { n in base.appendingPathComponent("media/ep\(n).mp3").absoluteString }
            try await Self.withPhone(origin: origin, base: base) { d, phone in
                try await d.client.setSyncUser("alice", password: "correct horse")
                // Alice's web app (her token: the same places as her login) and her phone.
                let alice = DaemonClient(baseURL: d.baseURL, token: try await d.client.makeUserToken("alice").token)
                let detail = try await alice.subscribe(url: feed)
                let ids = Dictionary(uniqueKeysWithValues: detail.episodes.map { ($0.title, $0.id) })

                // The phone stopped Episode 2 at 2:00 of 12:34: the web app resumes there.
                let played = #"{"podcast": "\#(feed)", "episode": "\#(media(2))", "action": "PLAY", "device": "phone", "timestamp": "2026-11-25T10:00:00", "started": 0, "position": 120, "total": 754}"#
                let answer = try #require(try await phone.json(.POST, "/api/2/episodes/alice.json", "[\(played)]") as? [String: Any])
                #expect(answer["timestamp"] is Int && answer["update_urls"] as? [Any] != nil)
                var episode2 = try await alice.podcast(detail.podcast.id).episodes.first { $0.id == ids["Episode 2"] }
                #expect(episode2?.playback?.positionSeconds == 120 && episode2?.playback?.played == false)
                #expect(try await d.client.syncUsers().users.first?.devices == 1)

                // The web app goes on to 5:00; the phone reads it back as a play from Ferry.
                _ = try await alice.updatePlayback(episode: ids["Episode 2"]!, PlaybackUpdate(positionSeconds: 300.4, durationSeconds: 754))
                let read = try #require(try await phone.json(.GET, "/api/2/episodes/alice.json?since=0&aggregated=true") as? [String: Any])
                let actions = try #require(read["actions"] as? [[String: Any]])
                #expect(actions.count == 1)
                #expect(actions.first?["device"] as? String == "ferry" && actions.first?["action"] as? String == "play")
                #expect(actions.first?["position"] as? Int == 300 && actions.first?["started"] as? Int == 120 && actions.first?["total"] as? Int == 754)
                #expect(actions.first?["episode"] as? String == media(2) && actions.first?["podcast"] as? String == feed)
                #expect((actions.first?["timestamp"] as? String)?.count == 19)
                let all = try #require(try await phone.json(.GET, "/api/2/episodes/alice.json?since=0") as? [String: Any])
                #expect((all["actions"] as? [Any])?.count == 2)
                let fromPhone = try #require(try await phone.json(.GET, "/api/2/episodes/alice.json?device=phone") as? [String: Any])
                #expect((fromPhone["actions"] as? [[String: Any]])?.map { $0["position"] as? Int } == [120])

                // An older action than the web app's save loses; a newer one near the end marks it played.
                let stale = #"{"podcast": "\#(feed)", "episode": "\#(media(2))", "action": "play", "timestamp": "2020-01-01T00:00:00", "position": 30, "total": 754}"#
                _ = try await phone.json(.POST, "/api/2/episodes/alice.json", "[\(stale)]")
                episode2 = try await alice.podcast(detail.podcast.id).episodes.first { $0.id == ids["Episode 2"] }
                #expect(episode2?.playback?.positionSeconds == 300.4)
                let end = #"{"podcast": "\#(feed)", "episode": "\#(media(2))", "action": "play", "position": 750, "total": 754}"#
                _ = try await phone.json(.POST, "/api/2/episodes/alice.json", "[\(end)]")
                episode2 = try await alice.podcast(detail.podcast.id).episodes.first { $0.id == ids["Episode 2"] }
                #expect(episode2?.playback?.positionSeconds == 750 && episode2?.playback?.played == true)
                // Marked new on the phone: unplayed again.
                _ = try await phone.json(.POST, "/api/2/episodes/alice.json", #"[{"podcast": "\#(feed)", "episode": "\#(media(2))", "action": "new"}]"#)
                #expect(try await alice.podcast(detail.podcast.id).episodes.first { $0.id == ids["Episode 2"] }?.playback?.played == false)

                // Mark all played in the web app: each episode reaches the phone as heard to the end.
                _ = try await alice.markPlayed(podcast: detail.podcast.id)
                let heard = try #require(try await phone.json(.GET, "/api/2/episodes/alice.json?device=ferry&aggregated=true") as? [String: Any])
                let ends = try #require(heard["actions"] as? [[String: Any]])
                #expect(Set(ends.compactMap { $0["episode"] as? String }) == [media(1), media(2), media(3)])
                #expect(ends.allSatisfy { $0["position"] as? Int == 754 && $0["total"] as? Int == 754 })

                // A malformed upload is refused whole: nothing stored, no position moved.
                let before = try #require(try await phone.json(.GET, "/api/2/episodes/alice.json") as? [String: Any])
                let good = #"{"podcast": "\#(feed)", "episode": "\#(media(1))", "action": "play", "position": 10, "total": 754}"#
                for bad in [
                    #"{"podcast": "not a url", "episode": "\#(media(1))", "action": "play"}"#,
                    #"{"podcast": "\#(feed)", "episode": "\#(media(1))", "action": "dance"}"#,
                    #"{"podcast": "\#(feed)", "episode": "\#(media(1))", "action": "play", "position": "ten"}"#,
                    #"{"podcast": "\#(feed)", "episode": "\#(media(1))", "action": "play", "timestamp": "yesterday"}"#,
                    #"{"podcast": "\#(feed)", "episode": "\#(media(1))", "action": "play", "total": 754}"#,
                    #"{"episode": "\#(media(1))", "action": "play"}"#,
                ] {
                    let refused = try await phone.send(.POST, "/api/2/episodes/alice.json", json: "[\(good), \(bad)]")
                    #expect(refused.status == 400, "\(bad): \(refused.body)")
                }
                #expect(try await phone.send(.POST, "/api/2/episodes/alice.json", json: #"{"actions": []}"#).status == 400)
                let after = try #require(try await phone.json(.GET, "/api/2/episodes/alice.json") as? [String: Any])
                #expect((after["actions"] as? [Any])?.count == (before["actions"] as? [Any])?.count)
                #expect(try await alice.podcast(detail.podcast.id).episodes.first { $0.id == ids["Episode 1"] }?.playback?.positionSeconds != 10)

                // Bob's phone and web app have places of their own: none of Alice's.
                try await d.client.setSyncUser("bob", password: "bob's password")
                let bob = DaemonClient(baseURL: d.baseURL, token: try await d.client.makeUserToken("bob").token)
                var bobsPhone = phone
                (bobsPhone.user, bobsPhone.password) = ("bob", "bob's password")
                let bobs = try #require(try await bobsPhone.json(.GET, "/api/2/episodes/bob.json?since=0") as? [String: Any])
                #expect((bobs["actions"] as? [Any])?.isEmpty == true)
                _ = try await bob.subscribe(url: feed)
                #expect(try await bob.podcast(detail.podcast.id).episodes.allSatisfy { $0.playback == nil })
                _ = try await bob.updatePlayback(episode: ids["Episode 2"]!, PlaybackUpdate(positionSeconds: 42))
                #expect(try await alice.podcast(detail.podcast.id).episodes.first { $0.id == ids["Episode 2"] }?.playback?.positionSeconds == 750)
            }
        }
    }

    @Test func theSyncListenerSpeaksHTTPSWhenGivenACertificate() async throws {
        try await Origin.run { origin, base in
            try await Self.withPhone(origin: origin, base: base, tls: true) { d, phone in
                #expect(phone.base.hasPrefix("https://localhost:"))
                try await d.client.setSyncUser("alice", password: "correct horse")
                #expect((try await phone.json(.GET, "/api/2/devices/alice.json") as? [Any])?.isEmpty == true)
                #expect(try await phone.send(.GET, "/api/2/devices/alice.json", credentials: false).status == 401)
            }
        }
    }

    @Test func theListenersAddress() throws {
        #expect(try SyncListener.parse("8123") == ("127.0.0.1", 8123))
        #expect(try SyncListener.parse("0.0.0.0:8123") == ("0.0.0.0", 8123))
        #expect(try SyncListener.parse("[::]:8123") == ("::", 8123))
        for bad in ["", "host:", ":80", "1.2.3.4:99999", "a/b:80"] {
            #expect(throws: FerryError.self, "\(bad)") { try SyncListener.parse(bad) }
        }
    }
}
