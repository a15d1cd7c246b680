#if canImport(Glibc)
import Glibc
#endif
import AsyncHTTPClient
import FerryKit
import FerryTestSupport
import Foundation
import Testing

/// How the real daemon comes to listen: on a socket systemd hands over, on 7447 or a free port
/// beside another daemon, and never on an address the user named when it is taken.
@Suite(.serialized) struct DaemonStartTests {
    /// Socket activation exactly as systemd does it (`systemd-socket-activate`, from systemd):
    /// the first connection starts `ferry serve`, which serves on the inherited socket, writes
    /// that address to daemon.json, sends READY=1 on the notify socket, and STOPPING=1 on SIGTERM.
    @Test func servesOnTheSocketSystemdHandsOverAndReportsReadiness() async throws {
        let activate = "/usr/bin/systemd-socket-activate"
        guard FileManager.default.isExecutableFile(atPath: activate) else {
            Issue.record("systemd-socket-activate is missing: install Debian's systemd package (scripts/test does as root)")
            return
        }
        try await CommandRunner.withHome { home in
            let notify = try NotifySocket(path: home.appendingPathComponent("notify").path)
            let port = try unusedLoopbackPort()
            var environment = ProcessInfo.processInfo.environment
            environment["FERRY_HOME"] = home.path
            environment["NOTIFY_SOCKET"] = notify.path
            environment["FERRY_PORT"] = nil
            let pid = try ChildProcess.spawn(
                activate, arguments: ["-E", "FERRY_HOME", "-E", "NOTIFY_SOCKET", "-l", "127.0.0.1:\(port)", CommandRunner.ferryBinary, "serve"],
                environment: environment, output: .appendToFile(home.appendingPathComponent("activate.log").path)
            )
            defer { kill(pid, SIGKILL) }
            try await Task.sleep(for: .milliseconds(300))
            #expect(CommandRunner.daemonInfo(home: home) == nil, "nothing runs before the first connection")

            // The first request reaches the daemon through the socket it was handed.
            let page = try await HTTPClient.shared.execute(HTTPClientRequest(url: "http://127.0.0.1:\(port)/"), timeout: .seconds(30))
            #expect(page.status == .ok)
            let ready = await notify.receive(timeout: .seconds(20))
            #expect(ready?.contains("READY=1") == true, "\(ready ?? "no message")")
            #expect(ready?.contains("MAINPID=\(pid)") == true, "systemd-socket-activate execs the daemon in its own process")

            let info = try #require(CommandRunner.daemonInfo(home: home))
            #expect(info.url == "http://127.0.0.1:\(port)")
            #expect(info.pid == pid)
            let status = try await CommandRunner.ferry(["status", "--json"], home: home)
            #expect(status.stdout.contains("\"url\" : \"http://127.0.0.1:\(port)\""), "\(status)")

            kill(pid, SIGTERM)
            let stopping = await notify.receive(timeout: .seconds(20))
            #expect(stopping?.contains("STOPPING=1") == true, "\(stopping ?? "no message")")
            #expect(await ChildProcess.wait(pid) == 0)
        }
    }

    /// Two homes at once: the first daemon takes 7447 (or, if another program holds it, a free
    /// port), the second finds the default taken and takes a free port; each CLI talks to its own.
    @Test func aSecondHomesDaemonTakesAFreePortBesideTheFirst() async throws {
        try await CommandRunner.withHome { first in
            try await CommandRunner.withHome { second in
                let origin = try await Self.queue("http://127.0.0.1:9/first.bin", home: first)
                #expect(origin.status == 0, "\(origin)")
                let other = try await Self.queue("http://127.0.0.1:9/second.bin", home: second)
                #expect(other.status == 0, "\(other)")
                let a = try #require(CommandRunner.daemonInfo(home: first)), b = try #require(CommandRunner.daemonInfo(home: second))
                #expect(a.url != b.url)
                #expect(a.pid != b.pid)
                #expect(b.url != "http://127.0.0.1:7447", "7447 was taken when the second daemon started")
                for (home, name) in [(first, "first.bin"), (second, "second.bin")] {
                    let list = try await CommandRunner.ferry(["ls", "--all", "--json"], home: home)
                    let transfers = try FerryJSON.decoder().decode([Transfer].self, from: Data(list.stdout.utf8))
                    #expect(transfers.map { URL(string: $0.url)!.lastPathComponent } == [name])
                }
                // An address the user names must be free: no quiet fallback.
                let port = try #require(URLComponents(string: a.url)?.port)
                let named = try await CommandRunner.ferry(["serve", "--port", String(port)], home: second, extraEnvironment: ["FERRY_HOME": second.path + "-x"])
                #expect(named.status != 0)
                #expect(named.stderr.contains("Port \(port) on 127.0.0.1 is already in use"), "\(named)")
            }
        }
    }

    /// `ferry get --no-wait` with the default address (no FERRY_PORT), as a user runs it.
    static func queue(_ url: String, home: URL) async throws -> CommandRunner.Output {
        var environment = ProcessInfo.processInfo.environment
        environment["FERRY_HOME"] = home.path
        environment["FERRY_PORT"] = nil
        environment["TERM"] = "dumb"
        return try await CommandRunner.run(CommandRunner.ferryBinary, ["get", "--no-wait", url], environment: environment, timeout: .seconds(60))
    }
}
