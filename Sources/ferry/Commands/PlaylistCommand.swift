import ArgumentParser
import FerryKit
import Foundation

/// `ferry playlist`: named queues of episodes and songs beside Up Next, the listener's own.
struct PlaylistCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "playlist",
        abstract: "Keep playlists beside Up Next: make, fill, reorder, move items between them, rename, delete.",
        discussion: """
            A playlist is a named queue ("road trip") of episodes and songs. Unlike Up Next, it keeps its items when they play: the web app's player plays one through, item after item.

            A PLAYLIST is its name or its id (`ferry playlist ls`). Episodes are numbered as `ferry podcast episodes PODCAST` shows them, songs by their catalog track id; `up-next` names Up Next in `move`.
              ferry playlist create "road trip"
              ferry playlist add "road trip" --episode 42
              ferry playlist add "road trip" --episode 43
              ferry playlist show "road trip"        (its items, in order)
              ferry playlist order "road trip" 2 1   (the second first)
              ferry playlist move --episode 42 "road trip" up-next
              ferry playlist rm "road trip" --episode 43
              ferry playlist rename "road trip" "long drive"
              ferry playlist delete "long drive"
            """,
        subcommands: [List.self, Create.self, Show.self, Rename.self, Add.self, Remove.self, Order.self, Move.self, Delete.self]
    )

    /// The id of the listener's playlist with this name, else this id.
    static func resolve(_ text: String, _ client: DaemonClient) async throws -> Int64 {
        let playlists = try await client.playlists()
        if let named = playlists.first(where: { $0.name == text }) { return named.id }
        if let id = Int64(text), playlists.contains(where: { $0.id == id }) { return id }
        throw ValidationError("You have no playlist named or numbered '\(text)'. `ferry playlist ls` lists yours.")
    }

    static func place(_ text: String, _ client: DaemonClient) async throws -> PlaylistPlace {
        text == "up-next" ? .upNext : .playlist(try await resolve(text, client))
    }

    static func clock(_ seconds: Double) -> String { BookmarkCommand.clock(seconds) }

    static func line(_ playlist: PlaylistSummary) -> String {
        "\(playlist.id)\t\(playlist.name)\t\(playlist.count == 1 ? "1 item" : "\(playlist.count) items")\t\(clock(playlist.durationSeconds))"
    }

    static func print(_ playlist: Playlist) {
        let total = playlist.items.reduce(0) { $0 + ($1.durationSeconds ?? 0) }
        Terminal.print("\(playlist.name) (playlist \(playlist.id)): \(playlist.items.count == 1 ? "1 item" : "\(playlist.items.count) items"), \(clock(total))")
        for (index, item) in playlist.items.enumerated() {
            let what = [item.subtitle, item.title].compactMap { $0 }.joined(separator: ": ")
            Terminal.print("\(index + 1).\t\(item.kind == .episode ? "episode" : "song") \(item.id)\t\(what)\t\(clock(item.durationSeconds ?? 0))")
        }
    }

    /// `--episode ID` or `--song ID`: one item.
    struct Item: ParsableArguments {
        @Option(name: .long, help: "An episode's number, as `ferry podcast episodes` shows it.")
        var episode: Int64?

        @Option(name: .long, help: "A song's catalog track id.")
        var song: Int64?

        func validate() throws {
            guard (episode == nil) != (song == nil) else { throw ValidationError("Name one item: --episode ID or --song ID.") }
        }

        var entry: UpNextEntry { episode.map { UpNextEntry(kind: .episode, id: $0) } ?? UpNextEntry(kind: .track, id: song ?? 0) }
    }

    struct List: AsyncParsableCommand {
        static let configuration = CommandConfiguration(commandName: "ls", abstract: "List your playlists: id, name, items, how long.")

        @OptionGroup var output: OutputOptions

        func run() async throws {
            let playlists = try await CLIConnection.connect().playlists()
            if output.json { return try FerryJSON.encoder(pretty: true).printing(PlaylistList(playlists: playlists)) }
            if playlists.isEmpty { return Terminal.print("No playlists yet: `ferry playlist create NAME`.") }
            for playlist in playlists { Terminal.print(PlaylistCommand.line(playlist)) }
        }
    }

    struct Create: AsyncParsableCommand {
        static let configuration = CommandConfiguration(commandName: "create", abstract: "Make a playlist, empty or with these episodes.")

        @Argument(help: "Its name (up to 100 characters; yours are each named differently).")
        var name: String

        @Option(name: .long, help: "An episode to start with (repeat it for more, in order).")
        var episode: [Int64] = []

        @OptionGroup var output: OutputOptions

        func run() async throws {
            let playlist = try await CLIConnection.connect().createPlaylist(name, items: episode.map { UpNextEntry(kind: .episode, id: $0) })
            if output.json { return try FerryJSON.encoder(pretty: true).printing(playlist) }
            Terminal.print("Made playlist \(playlist.id), \(playlist.name).")
        }
    }

    struct Show: AsyncParsableCommand {
        static let configuration = CommandConfiguration(commandName: "show", abstract: "A playlist's items, in the order they play.")

        @Argument(help: "The playlist's name or id.")
        var playlist: String

        @OptionGroup var output: OutputOptions

        func run() async throws {
            let client = try await CLIConnection.connect()
            let found = try await client.playlist(try await PlaylistCommand.resolve(playlist, client))
            if output.json { return try FerryJSON.encoder(pretty: true).printing(found) }
            PlaylistCommand.print(found)
        }
    }

    struct Rename: AsyncParsableCommand {
        static let configuration = CommandConfiguration(commandName: "rename", abstract: "Give a playlist another name.")

        @Argument(help: "The playlist's name or id.")
        var playlist: String

        @Argument(help: "The new name.")
        var name: String

        func run() async throws {
            let client = try await CLIConnection.connect()
            let renamed = try await client.renamePlaylist(try await PlaylistCommand.resolve(playlist, client), to: name)
            Terminal.print("Playlist \(renamed.id) is \(renamed.name) now.")
        }
    }

    struct Add: AsyncParsableCommand {
        static let configuration = CommandConfiguration(commandName: "add", abstract: "Put an episode or song at the end of a playlist.")

        @Argument(help: "The playlist's name or id.")
        var playlist: String

        @OptionGroup var item: Item

        @OptionGroup var output: OutputOptions

        func run() async throws {
            let client = try await CLIConnection.connect()
            let changed = try await client.addToPlaylist(try await PlaylistCommand.resolve(playlist, client), item.entry)
            if output.json { return try FerryJSON.encoder(pretty: true).printing(changed) }
            PlaylistCommand.print(changed)
        }
    }

    struct Remove: AsyncParsableCommand {
        static let configuration = CommandConfiguration(commandName: "rm", abstract: "Take an episode or song out of a playlist.")

        @Argument(help: "The playlist's name or id.")
        var playlist: String

        @OptionGroup var item: Item

        @OptionGroup var output: OutputOptions

        func run() async throws {
            let client = try await CLIConnection.connect()
            let id = try await PlaylistCommand.resolve(playlist, client)
            let entries = try await client.playlist(id).items.map { UpNextEntry(kind: $0.kind, id: $0.id) }
            guard entries.contains(item.entry) else {
                throw ValidationError("\(item.entry.kind == .episode ? "Episode" : "Song") \(item.entry.id) is not in \(playlist).")
            }
            let changed = try await client.setPlaylistItems(id, entries.filter { $0 != item.entry })
            if output.json { return try FerryJSON.encoder(pretty: true).printing(changed) }
            PlaylistCommand.print(changed)
        }
    }

    struct Order: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "order", abstract: "Reorder a playlist: the places (as `show` numbers them) in their new order; the rest follow.")

        @Argument(help: "The playlist's name or id.")
        var playlist: String

        @Argument(help: "Places, from 1: `2 1` puts the second item first.")
        var places: [Int]

        @OptionGroup var output: OutputOptions

        func run() async throws {
            let client = try await CLIConnection.connect()
            let id = try await PlaylistCommand.resolve(playlist, client)
            let entries = try await client.playlist(id).items.map { UpNextEntry(kind: $0.kind, id: $0.id) }
            guard places.allSatisfy({ entries.indices.contains($0 - 1) }) else {
                throw ValidationError("\(playlist) has \(entries.count) items: give places from 1 to \(entries.count).")
            }
            let first = places.map { entries[$0 - 1] }
            let changed = try await client.setPlaylistItems(id, first + entries.filter { !first.contains($0) })
            if output.json { return try FerryJSON.encoder(pretty: true).printing(changed) }
            PlaylistCommand.print(changed)
        }
    }

    struct Move: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "move", abstract: "Move an episode or song from one list to the end of another (a playlist or up-next).")

        @OptionGroup var item: Item

        @Argument(help: "Where it is: a playlist's name or id, or up-next.")
        var from: String

        @Argument(help: "Where it goes: a playlist's name or id, or up-next.")
        var to: String

        func run() async throws {
            let client = try await CLIConnection.connect()
            let (source, target) = (try await PlaylistCommand.place(from, client), try await PlaylistCommand.place(to, client))
            try await client.moveItem(item.entry, from: source, to: target)
            Terminal.print("Moved \(item.entry.kind == .episode ? "episode" : "song") \(item.entry.id) from \(from) to \(to).")
        }
    }

    struct Delete: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "delete", abstract: "Delete a playlist (its episodes and songs stay in the library).")

        @Argument(help: "The playlist's name or id.")
        var playlist: String

        func run() async throws {
            let client = try await CLIConnection.connect()
            let id = try await PlaylistCommand.resolve(playlist, client)
            try await client.deletePlaylist(id)
            Terminal.print("Deleted playlist \(id), \(playlist).")
        }
    }
}
