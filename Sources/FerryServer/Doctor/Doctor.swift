import FerryCore
import FerryKit
import FerryListening
import Foundation

/// `ferry doctor`: what is wrong with this Ferry, and with `fix` what is safe to mend.
///
/// It runs in the daemon (`GET`/`POST /v1/doctor`, an admin's) or, when no daemon runs, in the
/// CLI on a journal it opened itself, holding the daemon's lock. Each check reads first and
/// mends only what nothing else can own: a part file whose transfer is gone (ids are never
/// reused, and a part file is made after its transfer's row), modes of Ferry's own secrets,
/// episodes' files given back to their episodes.
package struct Doctor: Sendable {
    package let paths: FerryPaths
    /// Where the transfers are: the SQLite journal, or a cluster's.
    package let journal: any TransferJournal
    /// This machine's SQLite journal.
    package let local: SQLiteJournal
    /// To give files on disk back to their episodes; nil: only reported.
    package let podcasts: PodcastLibrary?
    /// The daemon's own listeners when it runs this (name → URL); nil: each configured port is
    /// tried, as a start would.
    package let listening: [(name: String, url: String)]?
    /// Made before (the CLI checked and perhaps recovered the journal before opening it).
    package var journalCheck: DoctorCheck?

    package init(
        paths: FerryPaths, journal: any TransferJournal, local: SQLiteJournal, podcasts: PodcastLibrary?, listening: [(name: String, url: String)]?,
        journalCheck: DoctorCheck? = nil
    ) {
        self.paths = paths
        self.journal = journal
        self.local = local
        self.podcasts = podcasts
        self.listening = listening
        self.journalCheck = journalCheck
    }

    var library: LibraryFolder { LibraryFolder(root: paths.library) }

    /// Every check, in order; with `fix`, each mends what is safe and says so.
    package func examine(fix: Bool) async -> DoctorReport {
        var checks: [DoctorCheck] = []
        if let journalCheck {
            checks.append(journalCheck)
        } else {
            checks.append(await self.checkJournal())
        }
        let transfers = (try? await journal.listTransfers(session: nil, states: nil, limit: nil, after: nil, newestFirst: false)) ?? []
        checks.append(await checkPartFiles(transfers, fix: fix))
        checks.append(await checkLibraryFiles(transfers, fix: fix))
        checks.append(checkListeners())
        checks.append(checkPermissions(fix: fix))
        checks.append(checkDisk(transfers))
        return DoctorReport(checks: checks, fixed: fix)
    }

    /// The journal as the daemon holds it: SQLite's integrity check, its size and its WAL's.
    func checkJournal() async -> DoctorCheck {
        let size = Self.describeSize(of: paths.journal)
        do {
            let problems = try await local.integrityProblems()
            let transfers = try await journal.counts().values.reduce(0, +)
            let events = try await local.writer.read { db in try Int.fetchOne(db, sql: "SELECT count(*) FROM event") ?? 0 }
            guard problems.isEmpty else {
                return DoctorCheck(
                    name: "journal", status: .problem, summary: "SQLite's integrity check failed on \(paths.journal.path)", details: problems,
                    advice: "Stop Ferry (`ferry service stop`, or end `ferry serve`) and run `ferry doctor --fix`: the journal is copied aside and every row SQLite can still read is kept."
                )
            }
            let shared = journal is SQLiteJournal ? "" : " (transfers in the cluster's PostgreSQL)"
            return DoctorCheck(name: "journal", status: .ok, summary: "intact; \(size); \(transfers) transfers, \(events) events\(shared)")
        } catch {
            return DoctorCheck(name: "journal", status: .problem, summary: "cannot read the journal: \(error)", advice: "Stop Ferry and run `ferry doctor --fix`.")
        }
    }

    /// `12.3 MiB, WAL 1.0 MiB` for the journal file and its WAL.
    static func describeSize(of journal: URL) -> String {
        let bytes = fileSize(journal.path) ?? 0
        let wal = fileSize(journal.path + "-wal") ?? 0
        return "\(ByteText.format(bytes)), WAL \(ByteText.format(wal))"
    }

    static func fileSize(_ path: String) -> Int64? {
        var info = stat()
        return stat(path, &info) == 0 ? Int64(info.st_size) : nil
    }
}

/// Byte counts as people read them.
package enum ByteText {
    package static func format(_ bytes: Int64) -> String {
        let units = ["bytes", "KiB", "MiB", "GiB", "TiB"]
        var value = Double(bytes), unit = 0
        while value >= 1024, unit < units.count - 1 {
            value /= 1024
            unit += 1
        }
        return unit == 0 ? "\(bytes) bytes" : "\(String(format: "%.1f", value)) \(units[unit])"
    }
}
