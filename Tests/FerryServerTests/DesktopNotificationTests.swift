import FerryKit
import FerryServer
import FerryTestSupport
import Foundation
import Testing

/// `--desktop-notify` on a real session bus: a `dbus-daemon` of the test's own, watched with
/// `dbus-monitor`, sees the freedesktop Notify call for a finished download, its name as the
/// summary (the name is data in a GVariant string: its quote is escaped, not the end of it).
@Suite struct DesktopNotificationTests {
    static let tools = ["/usr/bin/dbus-daemon", "/usr/bin/dbus-monitor", "/usr/bin/gdbus"]

    @Test func aFinishedDownloadIsShownOnTheDesktop() async throws {
        guard Self.tools.allSatisfy(FileManager.default.isExecutableFile(atPath:)) else {
            print("skipped: needs dbus-daemon, dbus-monitor (Debian: dbus-daemon, dbus-bin) and gdbus (libglib2.0-bin)")
            return
        }
        try await Origin.run { origin, base in
            origin.serve("/f", .init(data: Origin.bytes(5_000), contentDisposition: "attachment; filename=\"it's done.pdf\""))
            try await withTemporaryDirectory { home in
                let busOutput = home.appendingPathComponent("bus.txt")
                let monitorOutput = home.appendingPathComponent("monitor.txt")
                let bus = try ChildProcess.spawn(
                    "/usr/bin/dbus-daemon", arguments: ["--session", "--nofork", "--print-address"], output: .appendToFile(busOutput.path)
                )
                defer {
                    kill(bus, SIGTERM)
                    _ = waitpid(bus, nil, 0)
                }
                try await eventually("the bus's address") { ((try? String(contentsOf: busOutput, encoding: .utf8)) ?? "").contains("\n") }
                // The first line: what follows may be the bus's complaints (an fd limit it cannot raise).
                let address = try String(contentsOf: busOutput, encoding: .utf8).split(separator: "\n")[0].trimmingCharacters(in: .whitespaces)
                let monitor = try ChildProcess.spawn(
                    "/usr/bin/dbus-monitor", arguments: ["--address", address, "interface='org.freedesktop.Notifications'"],
                    output: .appendToFile(monitorOutput.path)
                )
                defer {
                    kill(monitor, SIGTERM)
                    _ = waitpid(monitor, nil, 0)
                }
                try await eventually("the monitor to listen") { FileManager.default.fileExists(atPath: monitorOutput.path) }
                try await Task.sleep(for: .milliseconds(300))
                try await DaemonHarness.run(home: home, configure: { $0.desktopBus = address }) { d in
                    _ = try await d.client.updateSessionConfiguration("cli", .init(set: TransferOptions(desktopNotify: true)))
                    let t = try await d.client.createTransfers(.init(urls: [base.appendingPathComponent("f").absoluteString])).transfers[0]
                    try await eventually("the Notify call", timeout: .seconds(15)) {
                        ((try? String(contentsOf: monitorOutput, encoding: .utf8)) ?? "").contains("member=Notify")
                    }
                    let seen = try String(contentsOf: monitorOutput, encoding: .utf8)
                    #expect(seen.contains(#"string "Downloaded it's done.pdf""#), "\(seen)")
                    #expect(seen.contains(#"string "Ferry""#))
                    #expect(try await d.client.transfer(t.id).state == .completed)
                }
            }
        }
    }
}
