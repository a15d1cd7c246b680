import ArgumentParser
import FerryKit
import Foundation

/// `ferry`: background downloads that survive crashes and reboots, a music and podcast client,
/// and the daemon behind both.
@main
struct Ferry: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "ferry",
        abstract: "Background downloads that keep going: resumable, crash-safe, verified.",
        discussion: """
            Transfers run in a daemon (`ferry serve`), which the other commands start in the \
            background when it is not running. Closing the terminal, Ctrl-C, `kill -9` or a \
            reboot do not lose a download: it resumes from the bytes already on disk.

            Files land in the library: $XDG_DATA_HOME/ferry (~/.local/share/ferry) with \
            Downloads/, Music/ and Podcasts/. The journal, token and daemon address live in \
            $XDG_STATE_HOME/ferry. FERRY_HOME=<dir> puts both under one folder.

            Examples:
              ferry get https://example.com/big.iso        download with a progress bar
              ferry get --no-wait URL1 URL2                queue and return at once
              ferry ls                                     what is running, paused or failed
              ferry pause 3 && ferry resume 3
              ferry wait 3 --timeout 600                   exit 0 once transfer 3 completed
              ferry search jose james && ferry preview 1   a song's 30-second preview into Music/
              ferry podcast add https://example.com/feed.xml
            """,
        version: FerryVersion.current,
        subcommands: [
            GetCommand.self, PutCommand.self, ListCommand.self, WaitCommand.self, SearchCommand.self, PreviewCommand.self, PodcastCommand.self, BookmarkCommand.self, PlaylistCommand.self, SyncCommand.self, UserCommand.self, CredentialsCommand.self, RemoteCommand.self, Aria2Command.self,
            PauseCommand.self, ResumeCommand.self, MoveCommand.self, CancelCommand.self, RemoveCommand.self,
            SessionCommand.self, StatusCommand.self, OpenCommand.self, ExtensionCommand.self, ServeCommand.self, StopCommand.self, ServiceCommand.self, ClusterCommand.self, DoctorCommand.self, BackupCommand.self, RestoreCommand.self,
        ]
    )

    /// Ferry's own errors become one line on stderr and exit status 1; argument errors keep
    /// ArgumentParser's usage messages.
    static func main() async {
        // A reader that closes the pipe early is an EPIPE for ``Terminal/print(_:terminator:)``
        // to end on quietly, not a signal that kills the command with status 141.
        signal(SIGPIPE, SIG_IGN)
        do {
            var command = try await asyncParseAsRoot(nil)
            if var asyncCommand = command as? AsyncParsableCommand {
                try await asyncCommand.run()
            } else {
                try command.run()
            }
        } catch let error as FerryError {
            Terminal.error(error.message)
            Foundation.exit(1)
        } catch {
            exit(withError: error)
        }
    }
}
