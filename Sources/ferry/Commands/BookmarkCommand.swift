import ArgumentParser
import FerryKit
import Foundation

/// `ferry bookmark`: moments of episodes marked, with notes, the listener's own.
struct BookmarkCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "bookmark",
        abstract: "Mark moments of episodes, with notes; list them, change a note, remove one.",
        discussion: """
            Episodes are numbered as `ferry podcast episodes PODCAST` shows them; a time is seconds,
            MM:SS or H:MM:SS.
              ferry bookmark add 42 12:30 --note "the part about tides"
              ferry bookmark ls            every bookmark (--episode 42: one episode's)
              ferry bookmark note 7 "better words"
              ferry bookmark rm 7
            The web app jumps to a bookmark with a tap; `ferry podcast export --json` includes them.
            """,
        subcommands: [Add.self, List.self, Note.self, Remove.self]
    )

    /// `754`, `12:34`, `1:02:03.5` → seconds.
    static func seconds(_ text: String) throws -> Double {
        let parts = text.split(separator: ":", omittingEmptySubsequences: false)
        guard (1...3).contains(parts.count), let last = Double(parts.last!), last >= 0, last.isFinite,
            parts.dropLast().allSatisfy({ Int($0).map { $0 >= 0 } ?? false })
        else { throw ValidationError("'\(text)' is not a time: give seconds, MM:SS or H:MM:SS.") }
        if parts.count > 1, last >= 60 { throw ValidationError("'\(text)' is not a time: seconds go up to 59 after a colon.") }
        return parts.dropLast().reduce(0) { $0 * 60 + Double(Int($1)!) } * 60 + last
    }

    static func clock(_ seconds: Double) -> String {
        let whole = Int(seconds)
        let (h, m, s) = (whole / 3600, whole % 3600 / 60, whole % 60)
        return h > 0 ? String(format: "%d:%02d:%02d", h, m, s) : String(format: "%d:%02d", m, s)
    }

    static func line(_ bookmark: Bookmark) -> String {
        let what = [bookmark.showTitle, bookmark.title].compactMap { $0 }.joined(separator: ": ")
        return "\(bookmark.id)\t\(clock(bookmark.seconds))\t\(what.isEmpty ? "\(bookmark.media) \(bookmark.mediaId)" : what)"
            + (bookmark.note.map { "\t\($0)" } ?? "")
    }

    struct Add: AsyncParsableCommand {
        static let configuration = CommandConfiguration(commandName: "add", abstract: "Bookmark a moment of an episode.")

        @Argument(help: "The episode's number.")
        var episode: Int64

        @Argument(help: ArgumentHelp("Where: seconds, MM:SS or H:MM:SS.", valueName: "time"))
        var at: String

        @Option(name: .long, help: "A note (up to 1,000 characters).")
        var note: String?

        @OptionGroup var output: OutputOptions

        func run() async throws {
            let bookmark = try await CLIConnection.connect().addBookmark(episode: episode, seconds: try BookmarkCommand.seconds(at), note: note)
            if output.json { return try FerryJSON.encoder(pretty: true).printing(bookmark) }
            Terminal.print(BookmarkCommand.line(bookmark))
        }
    }

    struct List: AsyncParsableCommand {
        static let configuration = CommandConfiguration(commandName: "ls", abstract: "List bookmarks: id, time, episode, note.")

        @Option(name: .long, help: "Only this episode's.")
        var episode: Int64?

        @OptionGroup var output: OutputOptions

        func run() async throws {
            let bookmarks = try await CLIConnection.connect().bookmarks(episode: episode)
            if output.json { return try FerryJSON.encoder(pretty: true).printing(BookmarkList(bookmarks: bookmarks)) }
            if bookmarks.isEmpty { return Terminal.print("No bookmarks yet: `ferry bookmark add EPISODE TIME`.") }
            for bookmark in bookmarks { Terminal.print(BookmarkCommand.line(bookmark)) }
        }
    }

    struct Note: AsyncParsableCommand {
        static let configuration = CommandConfiguration(commandName: "note", abstract: "Change a bookmark's note (\"\" removes it).")

        @Argument(help: "The bookmark's id, as `ferry bookmark ls` shows it.")
        var id: Int64

        @Argument(help: "The new note.")
        var note: String

        func run() async throws {
            Terminal.print(BookmarkCommand.line(try await CLIConnection.connect().updateBookmark(id, note: note)))
        }
    }

    struct Remove: AsyncParsableCommand {
        static let configuration = CommandConfiguration(commandName: "rm", abstract: "Remove a bookmark.")

        @Argument(help: "The bookmark's id, as `ferry bookmark ls` shows it.")
        var id: Int64

        func run() async throws {
            try await CLIConnection.connect().deleteBookmark(id)
            Terminal.print("Removed bookmark \(id).")
        }
    }
}
