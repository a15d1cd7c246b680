import ArgumentParser
import FerryKit
import FerryServer
import Foundation
import Logging

struct DoctorCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "doctor",
        abstract: "Say what is wrong with this Ferry; --fix mends what is safe to mend.",
        discussion: """
            Checks, in order: the journal (SQLite's integrity check, its size and its WAL's), part \
            files no transfer owns and unfinished transfers whose part file is gone, files in the \
            podcasts' and songs' folders no record names, the ports Ferry listens on, the systemd \
            service, the modes of the state folder and its secrets, and free space where \
            downloads go. Exit status 0 when nothing is a problem, 1 otherwise.

            --fix deletes part files no transfer owns, gives a podcast's files back to the episodes \
            they are named after, and sets the modes of Ferry's secrets (0600) and state folder \
            (0700); everything else it explains. With the daemon stopped it also mends a journal \
            that will not open: the file is copied aside as it is (journal-damaged-DATE.sqlite), \
            SQLite's recovery (the sqlite3 program) reads every row it can into a new journal, and \
            the report says how many rows of each table were kept.

            With the daemon running, the daemon makes the report (an admin's web app shows the \
            same under Settings); without it, this command does, holding the daemon's lock.
            """
    )

    @Flag(name: .long, help: "Mend what is safe to mend, and say what was done.")
    var fix = false

    @OptionGroup var output: OutputOptions

    func run() async throws {
        let paths = CLIConnection.paths
        var report: DoctorReport
        if let client = await DaemonConnector(paths: paths).running() {
            report = try await client.doctor(fix: fix)
        } else {
            report = try await Self.offline(paths: paths, fix: fix)
        }
        report.checks.append(ServiceCheck.check())
        if output.json {
            try FerryJSON.encoder(pretty: true).printing(report)
        } else {
            Self.show(report)
        }
        if report.status == .problem { throw ExitCode(1) }
    }

    /// No daemon: the journal judged (and with `fix` recovered) before it is opened, then the
    /// rest, while the daemon's lock keeps a daemon from starting on it.
    static func offline(paths: FerryPaths, fix: Bool) async throws -> DoctorReport {
        let lock = try DaemonLock(paths: paths)
        defer { withExtendedLifetime(lock) {} }
        let (journal, usable) = JournalRecovery.check(paths, fix: fix, tables: journalTables)
        guard usable else { return DoctorReport(checks: [journal], fixed: fix) }
        var logger = Logger(label: "ferry.doctor")
        logger.logLevel = .warning
        let doctor = try Doctor.offline(paths: paths, journalCheck: journal, logger: logger)
        return await doctor.examine(fix: fix)
    }

    static func show(_ report: DoctorReport) {
        let names = [
            "journal": "Journal", "partFiles": "Part files", "libraryFiles": "Library files", "listeners": "Listeners",
            "service": "Service", "permissions": "Permissions", "disk": "Disk space",
        ]
        let width = (names.values.map(\.count).max() ?? 10) + 2
        for check in report.checks {
            let mark = switch check.status {
            case .ok: "ok     "
            case .warning: "warning"
            case .problem: "PROBLEM"
            }
            let name = (names[check.name] ?? check.name).padding(toLength: width, withPad: " ", startingAt: 0)
            Terminal.print("\(mark)  \(name)\(check.summary)")
            let indent = String(repeating: " ", count: 9 + width)
            for line in check.details { Terminal.print("\(indent)· \(line)") }
            for line in check.mended { Terminal.print("\(indent)mended: \(line)") }
            if let advice = check.advice { Terminal.print("\(indent)→ \(advice)") }
        }
        let problems = report.checks.filter { $0.status == .problem }.count
        let warnings = report.checks.filter { $0.status == .warning }.count
        Terminal.print(
            problems + warnings == 0
                ? "Nothing is wrong."
                : "\(problems) problem\(problems == 1 ? "" : "s"), \(warnings) warning\(warnings == 1 ? "" : "s")."
                    + (report.fixed || problems == 0 ? "" : " `ferry doctor --fix` mends what is safe to mend.")
        )
    }
}

/// The systemd service `ferry service install` wrote, if any: its program still there, and
/// systemd's word on it.
enum ServiceCheck {
    static func check() -> DoctorCheck {
        let scope = SystemdUnits.Scope.user
        let file = SystemdUnits.folder(for: scope).appendingPathComponent("ferry.service")
        guard let unit = try? String(contentsOf: file, encoding: .utf8) else {
            return DoctorCheck(name: "service", status: .ok, summary: "no service installed (`ferry service install` keeps Ferry running)")
        }
        var details: [String] = []
        var status = DoctorCheck.Status.ok
        // ExecStart="/path/to/ferry" serve …: the program must still be there.
        if let line = unit.split(separator: "\n").first(where: { $0.hasPrefix("ExecStart=") }) {
            let command = line.dropFirst("ExecStart=".count)
            let program = command.hasPrefix("\"") ? String(command.dropFirst().prefix { $0 != "\"" }) : String(command.prefix { $0 != " " })
            if !FileManager.default.isExecutableFile(atPath: program) {
                details.append("\(file.path) runs \(program), which is gone")
                status = .problem
            }
        }
        let control = SystemdControl(scope: scope)
        if control.systemdRuns {
            let enabled = control.output(["is-enabled", "ferry.socket"]) ?? "unknown"
            let active = control.output(["is-active", "ferry.service"]) ?? "unknown"
            details.append("ferry.socket \(enabled); ferry.service \(active)")
            if active == "failed" {
                status = .problem
                details.append("`journalctl --user -u ferry` says why it failed")
            }
        } else {
            details.append("systemd is not running here (\(control.whyNot))")
            status = max(status, .warning)
        }
        return DoctorCheck(
            name: "service", status: status, summary: status == .ok ? "installed: \(file.path)" : "the service cannot run Ferry as installed",
            details: details,
            advice: status == .ok ? nil : "`ferry service install` (with the ferry you use now) writes the units again and starts them."
        )
    }
}
