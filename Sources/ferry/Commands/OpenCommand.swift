import ArgumentParser
import FerryKit
import Foundation

struct OpenCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "open",
        abstract: "Print a one-time login link for the web app (and open it in a browser when there is a desktop).",
        discussion: """
            The link works once, for five minutes; it sets a session cookie so the page can use \
            the daemon's API. Starts the daemon if it is not running.

            Each account has its own subscriptions, places and Up Next; this machine's own user \
            (the link without --user, and the CLI) has its own too. If your phone syncs as alice, \
            open the web app as alice to share her places:
              ferry open --user alice
            """
    )

    @Flag(name: .long, help: "Only print the link; do not start a browser.")
    var printOnly = false

    @Option(name: .long, help: "Sign in as this account (see `ferry user ls`) instead of this machine's own user.")
    var user: String?

    func run() async throws {
        let link = try await CLIConnection.connect().loginLink(user: user)
        Terminal.print(link.url)
        let environment = ProcessInfo.processInfo.environment
        let desktop = environment["DISPLAY"] != nil || environment["WAYLAND_DISPLAY"] != nil
        guard !printOnly, desktop, let opener = ["/usr/bin/xdg-open", "/usr/local/bin/xdg-open"].first(where: FileManager.default.isExecutableFile)
        else { return }
        _ = try? ChildProcess.spawn(opener, arguments: [link.url], newSession: true, output: .null)
    }
}
