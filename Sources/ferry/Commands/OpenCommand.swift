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
            """
    )

    @Flag(name: .long, help: "Only print the link; do not start a browser.")
    var printOnly = false

    func run() async throws {
        let link = try await CLIConnection.connect().loginLink()
        Terminal.print(link.url)
        let environment = ProcessInfo.processInfo.environment
        let desktop = environment["DISPLAY"] != nil || environment["WAYLAND_DISPLAY"] != nil
        guard !printOnly, desktop, let opener = ["/usr/bin/xdg-open", "/usr/local/bin/xdg-open"].first(where: FileManager.default.isExecutableFile)
        else { return }
        _ = try? ChildProcess.spawn(opener, arguments: [link.url], newSession: true, output: .null)
    }
}
