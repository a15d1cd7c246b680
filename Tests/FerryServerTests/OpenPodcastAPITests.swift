import FerryCore
import FerryKit
import FerryListening
import FerryServer
import FerryTestSupport
import Foundation
import NIOHTTP1
import Testing

/// The Open Podcast API's subscriptions (openpodcastapi.org, the draft's settled endpoints) on the
/// real daemon's sync listener, driven as its spec describes a client, while a phone on the
/// gpodder.net paths changes the same library: each sees the other's changes.
@Suite struct OpenPodcastAPITests {
    typealias Phone = SyncAPITests.Phone

    static func object(_ answer: (status: Int, body: String, headers: HTTPHeaders)) throws -> [String: Any] {
        try #require(try JSONSerialization.jsonObject(with: Data(answer.body.utf8)) as? [String: Any], "\(answer.body)")
    }

    static func list(_ phone: Phone, _ query: String = "") async throws -> [String: Any] {
        let answer = try await phone.send(.GET, "/v1/subscriptions" + query)
        #expect(answer.status == 200, "\(answer.body)")
        return try object(answer)
    }

    static func entries(_ page: [String: Any]) -> [[String: Any]] { page["subscriptions"] as? [[String: Any]] ?? [] }

    /// A feed whose `podcast:guid` is not its URL's (it moved, keeping its GUID).
    static func movedFeed(_ base: URL, guid: String) -> Data {
        let xml = String(decoding: PodcastAPITests.feed(base, title: "Show C").data, as: UTF8.self)
            .replacingOccurrences(of: "<rss version=\"2.0\"", with: "<rss version=\"2.0\" xmlns:podcast=\"https://podcastindex.org/namespace/1.0\"")
            .replacingOccurrences(of: "<channel>", with: "<channel><podcast:guid>\(guid)</podcast:guid>")
        return Data(xml.utf8)
    }

    @Test func theGUIDIsTheOnePodcastGUIDDefinesForTheFeedsURL() {
        // The GUID the Podcasting 2.0 namespace's own feed declares, from its URL.
        #expect(OpenPodcastGUID.of(feedURL: "https://mp3s.nashownotes.com/pc20rss.xml") == "917393e3-1b1e-5cef-ace4-edaa54e1f810")
        #expect(OpenPodcastGUID.of(feedURL: "http://mp3s.nashownotes.com/pc20rss.xml/") == "917393e3-1b1e-5cef-ace4-edaa54e1f810", "scheme and trailing slashes")
        #expect(OpenPodcastGUID.of(feedURL: "https://feeds.podcastindex.org/pc20.xml") == "d5a1ae35-5e8b-599a-943b-95609562016d")
        #expect(OpenPodcastGUID.normalized(" 917393E3-1B1E-5CEF-ACE4-EDAA54E1F810 ") == "917393e3-1b1e-5cef-ace4-edaa54e1f810")
        #expect(OpenPodcastGUID.normalized("y0ur-gu1d-g035-h3r3") == nil, "a feed's GUID that is no UUID is not used")
    }

    @Test func subscriptionsCrossTheDialectsAndDeletionsAreTombstones() async throws {
        try await Origin.run { origin, base in
            _ = PodcastAPITests.serveMedia(origin)
            let moved = "6f1c3a0e-2b7d-4c55-9a3e-5d1f0b8c7e21"
            origin.serve("/a.xml", .init(data: PodcastAPITests.feed(base, title: "Show A").data))
            origin.serve("/b.xml", .init(data: PodcastAPITests.feed(base, title: "Show B").data))
            origin.serve("/c.xml", .init(data: Self.movedFeed(base, guid: moved)))
            let (a, b, c) = ["a.xml", "b.xml", "c.xml"].map { base.appendingPathComponent($0).absoluteString }.splat3
            try await SyncAPITests.withPhone(origin: origin, base: base) { d, client in
                try await d.client.setSyncUser("alice", password: "correct horse")
                try await d.client.setSyncUser("bob", password: "battery staple")
                let alice = DaemonClient(baseURL: d.baseURL, token: try await d.client.makeUserToken("alice").token)
                var bob = client
                (bob.user, bob.password) = ("bob", "battery staple")

                // Added here: A is subscribed in the background; what is no http(s) URL fails with its reason.
                let added = try Self.object(try await client.send(
                    .POST, "/v1/subscriptions", json: #"{"subscriptions": [{"feed_url": "\#(a)"}, {"feed_url": "example.com/rss4"}, {"feed_url": "ftp://x/y"}]}"#
                ))
                let success = try #require(added["success"] as? [[String: Any]])
                #expect(success.count == 1 && success[0]["feed_url"] as? String == a && success[0]["is_subscribed"] as? Bool == true)
                #expect(success[0]["guid"] as? String == OpenPodcastGUID.of(feedURL: a))
                #expect(success[0]["subscription_changed"] is String)
                let failure = try #require(added["failure"] as? [[String: Any]])
                #expect(failure.map { $0["feed_url"] as? String } == ["example.com/rss4", "ftp://x/y"])
                #expect((failure[0]["message"] as? String)?.contains("No protocol present") == true)
                try await eventually("Show A subscribed in Ferry") { try await alice.podcasts().map(\.title) == ["Show A"] }

                // The gpodder.net phone sees it, and changes things: B added, A removed.
                let first = try #require(try await client.json(.GET, "/api/2/subscriptions/alice/phone.json") as? [String: Any])
                #expect(first["add"] as? [String] == [a])
                let before = Date().addingTimeInterval(-1)
                _ = try await client.json(.POST, "/api/2/subscriptions/alice/phone.json", #"{"add": ["\#(b)"], "remove": ["\#(a)"]}"#)
                try await eventually("Show B subscribed in Ferry") { try await alice.podcasts().map(\.title) == ["Show B"] }

                // Here: both, A no longer subscribed; every field the draft names.
                let all = try await Self.list(client)
                #expect(all["total"] as? Int == 2 && all["page"] as? Int == 1 && all["per_page"] as? Int == 50 && all["next"] == nil)
                let entries = Self.entries(all)
                #expect(entries.map { $0["feed_url"] as? String } == [a, b])
                #expect(entries.map { $0["is_subscribed"] as? Bool } == [false, true])
                #expect(entries.allSatisfy { $0["deleted"] == nil && $0["new_guid"] == nil && $0["subscription_changed"] is String })
                // `since` (ISO 8601): only what changed then or later; none from tomorrow.
                let since = ISO8601DateFormatter().string(from: before)
                #expect(Self.entries(try await Self.list(client, "?since=\(since)")).count == 2)
                let tomorrow = ISO8601DateFormatter().string(from: Date().addingTimeInterval(86_400))
                #expect(Self.entries(try await Self.list(client, "?since=\(tomorrow)")).isEmpty)
                #expect(Self.entries(try await Self.list(client, "?since=2022-04-23T18:25:43.511Z")).count == 2, "fractional seconds")
                // Pages: one a page, linked both ways.
                let second = try await Self.list(client, "?page=2&per_page=1")
                #expect(Self.entries(second).map { $0["feed_url"] as? String } == [b] && second["total"] as? Int == 2)
                #expect(second["previous"] as? String == "/v1/subscriptions?page=1&per_page=1" && second["next"] == nil)
                #expect(try await Self.list(client, "?page=1&per_page=1")["next"] as? String == "/v1/subscriptions?page=2&per_page=1")
                #expect(Self.entries(try await Self.list(client, "?page=9")).isEmpty)

                // One subscription by its GUID.
                let guidB = OpenPodcastGUID.of(feedURL: b)
                let one = try Self.object(try await client.send(.GET, "/v1/subscriptions/\(guidB)"))
                #expect(one["feed_url"] as? String == b && one["guid"] as? String == guidB && one["is_subscribed"] as? Bool == true)

                // Unsubscribed here: the phone hears of it, and Ferry leaves the podcast.
                let mark = Int(Date().timeIntervalSince1970) - 1
                let left = try Self.object(try await client.send(.PATCH, "/v1/subscriptions/\(guidB)", json: #"{"is_subscribed": false}"#))
                #expect(left["is_subscribed"] as? Bool == false && left["subscription_changed"] is String && left["new_feed_url"] == nil)
                let delta = try #require(try await client.json(.GET, "/api/2/subscriptions/alice/phone.json?since=\(mark)") as? [String: Any])
                // (A's removal may be in the same second: `since` sends that second again.)
                #expect((delta["remove"] as? [String])?.contains(b) == true && (delta["add"] as? [String])?.contains(b) == false)
                try await eventually("Show B left") { try await alice.podcasts().isEmpty }

                // A moved to C by its new URL: C is subscribed, A left; C's feed names its own GUID,
                // which becomes new_guid and finds it too.
                let readded = try Self.object(try await client.send(.POST, "/v1/subscriptions", json: #"{"subscriptions": [{"feed_url": "\#(a)"}]}"#))
                #expect((readded["success"] as? [Any])?.count == 1)
                try await eventually("Show A again") { try await alice.podcasts().map(\.title) == ["Show A"] }
                let guidA = OpenPodcastGUID.of(feedURL: a)
                let movedTo = try Self.object(try await client.send(.PATCH, "/v1/subscriptions/\(guidA)", json: #"{"new_feed_url": "\#(c)"}"#))
                #expect(movedTo["new_feed_url"] as? String == c)
                try await eventually("Show C subscribed instead") { try await alice.podcasts().map(\.title) == ["Show C"] }
                let guidC = OpenPodcastGUID.of(feedURL: c)
                let showC = try Self.object(try await client.send(.GET, "/v1/subscriptions/\(moved)"))
                #expect(showC["feed_url"] as? String == c && showC["guid"] as? String == guidC && showC["new_guid"] as? String == moved)
                #expect(showC["guid_changed"] is String)
                let phone = try #require(try await client.json(.GET, "/api/2/subscriptions/alice/phone.json") as? [String: Any])
                #expect(phone["add"] as? [String] == [c])

                // Deleted: 202 with the deletion's id, whose status is SUCCESS; the subscription is
                // Gone (410) from then on, listed with its date, and the phone hears it removed.
                let deleted = try await client.send(.DELETE, "/v1/subscriptions/\(guidC)")
                #expect(deleted.status == 202, "\(deleted.body)")
                let deletion = try #require(try Self.object(deleted)["deletion_id"] as? Int)
                let status = try Self.object(try await client.send(.GET, "/v1/deletions/\(deletion)"))
                #expect(status["deletion_id"] as? Int == deletion && status["status"] as? String == "SUCCESS")
                let gone = try await client.send(.GET, "/v1/subscriptions/\(guidC)")
                let goneBody = try Self.object(gone)
                #expect(gone.status == 410 && goneBody["code"] as? Int == 410, "\(gone.body)")
                #expect(try await client.send(.PATCH, "/v1/subscriptions/\(guidC)", json: #"{"is_subscribed": true}"#).status == 410)
                let listed = try #require(Self.entries(try await Self.list(client)).first { $0["feed_url"] as? String == c })
                #expect(listed["deleted"] is String && listed["is_subscribed"] as? Bool == false)
                try await eventually("Show C left") { try await alice.podcasts().isEmpty }
                let afterDelete = try #require(try await client.json(.GET, "/api/2/subscriptions/alice/phone.json") as? [String: Any])
                #expect(afterDelete["add"] as? [String] == [])
                // A second DELETE answers the same deletion.
                let again = try await client.send(.DELETE, "/v1/subscriptions/\(guidC)")
                let againBody = try Self.object(again)
                #expect(again.status == 202 && againBody["deletion_id"] as? Int == deletion)
                // Added again (here or anywhere): no longer Gone; the deletion still answers.
                _ = try await client.send(.POST, "/v1/subscriptions", json: #"{"subscriptions": [{"feed_url": "\#(c)", "guid": "\#(moved)"}]}"#)
                #expect(try await client.send(.GET, "/v1/subscriptions/\(guidC)").status == 200)
                #expect(try await client.send(.GET, "/v1/deletions/\(deletion)").status == 200)

                // Bob sees none of it: not Alice's subscriptions, GUIDs or deletions.
                #expect(Self.entries(try await Self.list(bob)).isEmpty)
                #expect(try await bob.send(.GET, "/v1/subscriptions/\(guidB)").status == 404)
                #expect(try await bob.send(.DELETE, "/v1/subscriptions/\(guidB)").status == 404)
                #expect(try await bob.send(.GET, "/v1/deletions/\(deletion)").status == 404)
            }
        }
    }

    @Test func whatItRefusesChangesNothing() async throws {
        try await Origin.run { origin, base in
            // A feed no one serves (404): it stays pending, and nothing leaves loopback.
            let x = base.appendingPathComponent("x.xml").absoluteString
            try await SyncAPITests.withPhone(origin: origin, base: base) { d, client in
                try await d.client.setSyncUser("alice", password: "correct horse")
                // Without a login, or with a wrong password: 401, and nothing is listed.
                #expect(try await client.send(.GET, "/v1/subscriptions", credentials: false).status == 401)
                var wrong = client
                wrong.password = "wrong"
                #expect(try await wrong.send(.POST, "/v1/subscriptions", json: #"{"subscriptions": [{"feed_url": "\#(x)"}]}"#).status == 401)

                for query in ["?since=yesterday", "?per_page=0", "?per_page=501", "?page=0", "?page=x"] {
                    let answer = try await client.send(.GET, "/v1/subscriptions" + query)
                    #expect(answer.status == 400, "\(query)")
                    let problem = try Self.object(answer)
                    #expect(problem["code"] as? Int == 400 && problem["message"] is String, "\(query): \(answer.body)")
                }
                for bad in ["", "[", #"{"subscriptions": "\#(x)"}"#, #"{"subscriptions": [{"guid": "x"}]}"#] {
                    #expect(try await client.send(.POST, "/v1/subscriptions", json: bad).status == 400, "\(bad)")
                }
                let many = (0...1000).map { #"{"feed_url": "\#(x)?\#($0)"}"# }.joined(separator: ",")
                #expect(try await client.send(.POST, "/v1/subscriptions", json: #"{"subscriptions": [\#(many)]}"#).status == 400)
                let unknown = OpenPodcastGUID.of(feedURL: base.appendingPathComponent("never.xml").absoluteString)
                for method in [HTTPMethod.GET, .DELETE] {
                    let answer = try await client.send(method, "/v1/subscriptions/\(unknown)")
                    let problem = try Self.object(answer)
                    #expect(answer.status == 404 && problem["code"] as? Int == 404, "\(method)")
                }
                #expect(try await client.send(.PATCH, "/v1/subscriptions/not-a-guid", json: #"{"is_subscribed": true}"#).status == 404)
                #expect(try await client.send(.GET, "/v1/deletions/0").status == 404)
                #expect(try await client.send(.GET, "/v1/deletions/x").status == 404)

                // A subscription, then changes it cannot make: nothing to change, a bad URL, another GUID.
                _ = try await client.send(.POST, "/v1/subscriptions", json: #"{"subscriptions": [{"feed_url": "\#(x)"}]}"#)
                let guid = OpenPodcastGUID.of(feedURL: x)
                for bad in ["{}", #"{"new_feed_url": "ftp://127.0.0.1/y"}"#, #"{"new_guid": "\#(unknown)"}"#, #"{"is_subscribed": "no"}"#] {
                    #expect(try await client.send(.PATCH, "/v1/subscriptions/\(guid)", json: bad).status == 400, "\(bad)")
                }
                let list = Self.entries(try await Self.list(client))
                #expect(list.map { $0["feed_url"] as? String } == [x] && list[0]["is_subscribed"] as? Bool == true)
            }
        }
    }
}

extension Array {
    fileprivate var splat3: (Element, Element, Element) { (self[0], self[1], self[2]) }
}
