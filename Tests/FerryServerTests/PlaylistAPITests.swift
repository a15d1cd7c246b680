import FerryCore
import FerryKit
import FerryTestSupport
import Foundation
import Testing

/// Playlists through the API: named queues beside Up Next, each listener's own (members allowed),
/// made, filled, reordered, renamed, moved between and to Up Next, deleted; bad input refused.
@Suite struct PlaylistAPITests {
    @Test func aListenerKeepsARoadTripBesideUpNext() async throws {
        try await Origin.run { origin, base in
            _ = PodcastAPITests.serveMedia(origin)
            origin.serve("/feed.xml", .init(data: PodcastAPITests.feed(base).data))
            let feed = base.appendingPathComponent("feed.xml").absoluteString
            try await HouseholdListeningTests.withHousehold { d, alice, bob in
                let show = try await alice.subscribe(url: feed)
                let ids = Dictionary(uniqueKeysWithValues: show.episodes.map { ($0.title, $0.id) })
                let (one, two, three) = (ids["Episode 1"]!, ids["Episode 2"]!, ids["Episode 3"]!)
                let episode: @Sendable (Int64) -> UpNextEntry = { UpNextEntry(kind: .episode, id: $0) }
                #expect(try await alice.playlists().isEmpty)

                // Made, filled, reordered (the same item twice keeps its first place).
                let trip = try await alice.createPlaylist("  road trip ")
                #expect(trip.name == "road trip" && trip.items.isEmpty)
                _ = try await alice.addToPlaylist(trip.id, episode(one))
                let filled = try await alice.addToPlaylist(trip.id, episode(two))
                #expect(filled.items.map(\.id) == [one, two])
                #expect(filled.items[0].title == "Episode 1" && filled.items[0].subtitle == "Test Show")
                #expect(filled.items[0].playURL == "/v1/episodes/\(one)/stream")
                #expect(try await alice.addToPlaylist(trip.id, episode(one)).items.map(\.id) == [one, two], "already there: kept in its place")
                let reordered = try await alice.setPlaylistItems(trip.id, [episode(two), episode(one), episode(two)])
                #expect(reordered.items.map(\.id) == [two, one])
                let work = try await alice.createPlaylist("Commute", items: [episode(three)])
                let list = try await alice.playlists()
                #expect(list.map(\.name) == ["Commute", "road trip"])
                #expect(list.map(\.count) == [1, 2])

                // Renamed; a name of hers taken, empty or too long is refused.
                #expect(try await alice.renamePlaylist(trip.id, to: "Road trip").name == "Road trip")
                let taken = await Self.refusal { _ = try await alice.createPlaylist("Commute") }
                #expect(taken?.code == .invalidState && taken?.message.contains("already have a playlist named “Commute”") == true, "\(String(describing: taken))")
                await #expect(throws: FerryError.self) { try await alice.renamePlaylist(work.id, to: "Road trip") }
                await #expect(throws: FerryError.self) { try await alice.createPlaylist("   ") }
                await #expect(throws: FerryError.self) { try await alice.createPlaylist(String(repeating: "x", count: 101)) }
                await #expect(throws: FerryError.self) { try await alice.createPlaylist("two\nlines") }

                // Moved between lists in one step: to Up Next, back, to another playlist.
                try await alice.moveItem(episode(two), from: .playlist(trip.id), to: .upNext)
                #expect(try await alice.playlist(trip.id).items.map(\.id) == [one])
                #expect(try await alice.upNext().items.map(\.id) == [two])
                try await alice.moveItem(episode(two), from: .upNext, to: .playlist(work.id))
                #expect(try await alice.upNext().items.isEmpty)
                #expect(try await alice.playlist(work.id).items.map(\.id) == [three, two])
                await #expect(throws: FerryError.self, "not in it") { try await alice.moveItem(episode(two), from: .upNext, to: .playlist(trip.id)) }
                await #expect(throws: FerryError.self, "the same list") { try await alice.moveItem(episode(one), from: .playlist(trip.id), to: .playlist(trip.id)) }
                #expect(try await alice.playlist(trip.id).items.map(\.id) == [one], "a refused move changes nothing")

                // Bad items: an unknown episode or song is named; a bad kind; too many.
                let unknown = await Self.refusal { _ = try await alice.setPlaylistItems(trip.id, [episode(one), episode(999_999)]) }
                #expect(unknown?.code == .notFound && unknown?.message.contains("no episode 999999") == true, "\(String(describing: unknown))")
                await #expect(throws: FerryError.self) { try await alice.addToPlaylist(trip.id, UpNextEntry(kind: .track, id: 5)) }
                let many = (1...(Playlist.limit + 1)).map { _ in episode(one) } + [episode(two), episode(three)]
                #expect(try await alice.setPlaylistItems(trip.id, many).items.count == 3, "repeats are dropped before the limit counts")
                let tooMany = await Self.refusal { _ = try await alice.createPlaylist("big", items: (1...Int64(Playlist.limit + 1)).map(episode)) }
                #expect(tooMany?.code == .invalidRequest && tooMany?.message.contains("at most 500 items") == true, "\(String(describing: tooMany))")

                // Bob, a member too, sees none of hers and cannot read, change, fill or delete them (404).
                _ = try await bob.subscribe(url: feed)
                #expect(try await bob.playlists().isEmpty)
                for attempt in [
                    { _ = try await bob.playlist(trip.id) }, { _ = try await bob.renamePlaylist(trip.id, to: "mine") },
                    { _ = try await bob.setPlaylistItems(trip.id, []) }, { _ = try await bob.addToPlaylist(trip.id, episode(one)) },
                    { try await bob.moveItem(episode(one), from: .playlist(trip.id), to: .upNext) }, { try await bob.deletePlaylist(trip.id) },
                ] as [@Sendable () async throws -> Void] {
                    do {
                        try await attempt()
                        Issue.record("Bob reached Alice's playlist")
                    } catch let error as FerryError {
                        #expect(error.code == .notFound, "\(error)")
                    }
                }
                // His own of the same name is fine.
                #expect(try await bob.createPlaylist("Road trip").name == "Road trip")
                #expect(try await alice.playlist(trip.id).items.count == 3)

                // Deleted: gone, its episodes stay.
                try await alice.deletePlaylist(work.id)
                #expect(try await alice.playlists().map(\.name) == ["Road trip"])
                await #expect(throws: FerryError.self) { try await alice.playlist(work.id) }
                #expect(try await alice.podcast(show.podcast.id).episodes.count == 3)
            }
        }
    }

    /// The HTTP statuses: 201, 409 for a name taken, 400 for a bad name or kind, 404 naming an
    /// unknown episode or a playlist that is not there.
    @Test func statusesSayWhatWentWrong() async throws {
        try await withTemporaryDirectory { home in
            try await DaemonHarness.run(home: home) { d in
                let made = try await d.raw(.POST, "/v1/playlists", body: #"{"name": "road trip"}"#)
                #expect(made.status == 201, "\(made.body)")
                let id = try FerryJSON.decoder().decode(Playlist.self, from: Data(made.body.utf8)).id
                let again = try await d.raw(.POST, "/v1/playlists", body: #"{"name": "road trip"}"#)
                #expect(again.status == 409 && again.body.contains("invalid_state"), "\(again.body)")
                #expect(try await d.raw(.POST, "/v1/playlists", body: #"{"name": ""}"#).status == 400)
                #expect(try await d.raw(.PATCH, "/v1/playlists/\(id)", body: #"{"name": "\#(String(repeating: "x", count: 101))"}"#).status == 400)
                #expect(try await d.raw(.POST, "/v1/playlists/\(id)/items", body: #"{"kind": "video", "id": 1}"#).status == 400)
                let unknown = try await d.raw(.POST, "/v1/playlists/\(id)/items", body: #"{"kind": "episode", "id": 424242}"#)
                #expect(unknown.status == 404 && unknown.body.contains("There is no episode 424242."), "\(unknown.body)")
                let move = try await d.raw(.POST, "/v1/playlists/move", body: #"{"kind": "episode", "id": 1, "from": "later", "to": "up-next"}"#)
                #expect(move.status == 400, "\(move.body)")
                #expect(try await d.raw(.GET, "/v1/playlists/\(id + 1)").status == 404)
                #expect(try await d.raw(.DELETE, "/v1/playlists/\(id)").status == 204)
                #expect(try await d.raw(.DELETE, "/v1/playlists/\(id)").status == 404)
            }
        }
    }

    static func refusal(_ body: () async throws -> Void) async -> FerryError? {
        do {
            try await body()
            return nil
        } catch {
            return error as? FerryError
        }
    }
}
