import Foundation

/// What `ferry doctor` (and `GET /v1/doctor`, an admin's) found: one entry per check, in the
/// order they ran.
public struct DoctorReport: Codable, Sendable, Hashable {
    public var checks: [DoctorCheck]
    /// True when the report was made by `--fix` (`POST /v1/doctor`): each check says what it mended.
    public var fixed: Bool

    public init(checks: [DoctorCheck], fixed: Bool) {
        self.checks = checks
        self.fixed = fixed
    }

    /// The worst verdict of any check.
    public var status: DoctorCheck.Status { checks.map(\.status).max() ?? .ok }
}

/// One check's verdict: a line to show, the details behind it, what to do and what was done.
public struct DoctorCheck: Codable, Sendable, Hashable {
    /// `journal`, `partFiles`, `libraryFiles`, `listeners`, `service`, `permissions`, `disk`.
    public var name: String
    public var status: Status
    /// One line: what was found.
    public var summary: String
    /// The findings behind it (a path and what is wrong with it), at most 50.
    public var details: [String]
    /// What the user can do about what is left, if anything.
    public var advice: String?
    /// What `--fix` did (empty without it, or when nothing was safe to mend).
    public var mended: [String]

    /// `ok`: nothing to do; `warning`: worth knowing, nothing is lost; `problem`: something
    /// fails or will.
    public enum Status: String, Codable, Sendable, Hashable, Comparable {
        case ok, warning, problem

        private var rank: Int { self == .ok ? 0 : self == .warning ? 1 : 2 }
        public static func < (lhs: Self, rhs: Self) -> Bool { lhs.rank < rhs.rank }
    }

    public init(name: String, status: Status, summary: String, details: [String] = [], advice: String? = nil, mended: [String] = []) {
        self.name = name
        self.status = status
        self.summary = summary
        self.details = Array(details.prefix(50))
        self.advice = advice
        self.mended = mended
    }
}
