import FerryTestSupport
import Foundation
import Testing

@testable import ferry

/// The units `ferry service install` writes: their text, and systemd's own verdict on them.
@Suite struct SystemdUnitsTests {
    let units = SystemdUnits(
        scope: .user, executable: "/opt/my ferry/bin/ferry", host: "127.0.0.1", port: 7447,
        environment: ["FERRY_HOME": "/srv/ferry 100%", "https_proxy": "http://ann:p\"w@proxy:3128"]
    )

    @Test func aUserServiceRestartsStopsGracefullyAndReportsReadiness() {
        let service = units.service
        #expect(service.contains("Type=notify\n"))
        #expect(service.contains("Restart=on-failure\n"))
        #expect(service.contains("KillSignal=SIGTERM\n"))
        #expect(service.contains("Requires=ferry.socket\nAfter=ferry.socket\n"))
        #expect(service.contains("WantedBy=default.target\n"))
        #expect(!service.contains("User="))
        #expect(!service.contains("network-online"))
        // Quoted (a space in the path), `%` doubled (a specifier otherwise), `"` escaped.
        #expect(service.contains(#"ExecStart="/opt/my ferry/bin/ferry" serve"#))
        #expect(service.contains(#"Environment="FERRY_HOME=/srv/ferry 100%%""#))
        #expect(service.contains(#"Environment="https_proxy=http://ann:p\"w@proxy:3128""#))
        #expect(units.socket.contains("ListenStream=127.0.0.1:7447\n"))
        #expect(units.socket.contains("WantedBy=sockets.target\n"))
    }

    @Test func aSystemServiceRunsAsItsUserAfterTheNetwork() {
        var system = units
        system.scope = .system(user: "ann")
        system.host = "::1"
        #expect(system.serviceFileName == "ferry-ann.service")
        #expect(system.service.contains("User=ann\n"))
        #expect(system.service.contains("Requires=ferry-ann.socket\n"))
        #expect(system.service.contains("After=network-online.target\n"))
        #expect(system.service.contains("WantedBy=multi-user.target\n"))
        #expect(system.socket.contains("ListenStream=[::1]:7447\n"))
    }

    @Test func aDollarIsLiteralOnlyInTheCommandLine() {
        #expect(SystemdUnits.quoted("/a$b", command: true) == #""/a$$b""#)
        #expect(SystemdUnits.quoted("X=$b") == #""X=$b""#)
    }

    /// `ferry service install` where systemd does not run: it writes the units, says so, and
    /// `systemd-analyze verify` accepts them (not one warning; a broken copy gets one, so the check can fail).
    @Test func installedUnitsPassSystemdVerify() async throws {
        guard FileManager.default.isExecutableFile(atPath: "/usr/bin/systemd-analyze") else {
            Issue.record("systemd-analyze is missing: install Debian's systemd package (scripts/test does as root)")
            return
        }
        try await CommandRunner.withHome { home in
            let folder = home.appendingPathComponent("units")
            let environment = ["FERRY_SYSTEMD_UNIT_DIR": folder.path, "https_proxy": "http://ann:secret@127.0.0.1:3128"]
            let install = try await CommandRunner.ferry(["service", "install", "--port", "7599"], home: home, extraEnvironment: environment)
            #expect(install.status == 0, "\(install)")
            let service = try String(contentsOf: folder.appendingPathComponent("ferry.service"), encoding: .utf8)
            #expect(service.contains("Environment=\"FERRY_HOME=\(home.path)\""))
            #expect(service.contains("https_proxy=http://ann:secret@127.0.0.1:3128"))
            let mode = try FileManager.default.attributesOfItem(atPath: folder.appendingPathComponent("ferry.service").path)[.posixPermissions] as? Int
            #expect(mode == 0o600, "the unit may hold proxy credentials")
            if !FileManager.default.fileExists(atPath: "/run/systemd/system") {
                #expect(install.stdout.contains("systemd does not run here"))
            }

            // Clean: no error, and not one warning (systemd ignores a bad line with a warning).
            let verify = try await Self.verify(folder, ["ferry.service", "ferry.socket"])
            #expect(verify.status == 0 && verify.stderr.isEmpty, "\(verify)")

            let broken = service.replacingOccurrences(of: "Type=notify", with: "Type=eventually")
            try Data(broken.utf8).write(to: folder.appendingPathComponent("ferry.service"))
            let refused = try await Self.verify(folder, ["ferry.service", "ferry.socket"])
            #expect(refused.status != 0 || !refused.stderr.isEmpty, "systemd-analyze verify accepted Type=eventually: \(refused)")

            let status = try await CommandRunner.ferry(["service", "status", "--json"], home: home, extraEnvironment: environment)
            #expect(status.status == 0)
            #expect(status.stdout.contains("\"installed\" : true"))
            let uninstall = try await CommandRunner.ferry(["service", "uninstall"], home: home, extraEnvironment: environment)
            #expect(uninstall.status == 0, "\(uninstall)")
            #expect(!FileManager.default.fileExists(atPath: folder.appendingPathComponent("ferry.service").path))
            let after = try await CommandRunner.ferry(["service", "status"], home: home, extraEnvironment: environment)
            #expect(after.status == 1)
        }
    }

    static func verify(_ folder: URL, _ names: [String]) async throws -> CommandRunner.Output {
        try await CommandRunner.run(
            "/usr/bin/systemd-analyze", ["verify", "--man=no"] + names.map { folder.appendingPathComponent($0).path },
            environment: ProcessInfo.processInfo.environment, timeout: .seconds(60)
        )
    }
}
