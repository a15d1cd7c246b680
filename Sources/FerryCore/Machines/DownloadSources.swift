import Foundation

/// The servers one attempt of a download fetches from: the one whose answer the download
/// follows (the reference: its URL, or a mirror when the URL failed first), then the other
/// mirrors. Pure: it judges each failure of a source, counts failures in a row, and drops sources
/// while others remain.
///
/// A mirror whose copy differs (another length or validator) or that answers it has no such file
/// (404, 410, 401, 403) is dropped for good; one that keeps failing in a way waiting could mend
/// (refused, 5xx) is dropped for this attempt. The reference's file changing starts the download
/// over, as with one server.
struct DownloadSources: Sendable {
    struct Source: Sendable, Hashable {
        let url: URL
        let host: String
        /// Not the transfer's own URL: it can be dropped for good.
        let isMirror: Bool
        fileprivate(set) var isDropped = false
        /// Failures in a row without a byte from it between them.
        fileprivate var failures = 0
        fileprivate var bytesAtFailure: Int64 = -1
        fileprivate(set) var bytes: Int64 = 0
    }

    /// What a failure of a source means for the download.
    enum Verdict: Sendable, Hashable {
        /// Ask it again (a dropped connection, a 503 once).
        case retry
        /// Go on without it: for good (record it) or for this attempt.
        case drop(reason: String, forGood: Bool)
        /// The reference's file changed: the download starts over.
        case restart(reason: String)
        /// Nothing else is left: the attempt fails with this error.
        case fail
    }

    private(set) var all: [Source]

    /// - Parameters:
    ///   - reference: the URL the download follows (index 0).
    ///   - mirrors: the other URLs still in use.
    ///   - own: the transfer's URL, which is never dropped for good.
    init(reference: URL, mirrors: [URL], own: URL) {
        all = ([reference] + mirrors).map { Source(url: $0, host: $0.host?.lowercased() ?? "", isMirror: $0 != own) }
    }

    /// Sources still in use.
    var live: [Int] { all.indices.filter { !all[$0].isDropped } }

    /// Bytes of the file arrived from `source`: its failures in a row end.
    mutating func received(_ count: Int64, from source: Int) {
        all[source].bytes += count
    }

    /// Judges a failure of `source`; a source that is dropped is no longer ``live``.
    /// - Parameter limit: failures in a row that waiting could mend before it is dropped.
    mutating func failed(_ source: Int, error: any Error, limit: Int) -> Verdict {
        let others = live.contains { $0 != source }
        let mirror = all[source].isMirror
        let verdict: Verdict
        switch error {
        case let changed as FileChanged:
            verdict = source == 0 ? .restart(reason: changed.reason) : .drop(reason: "its copy differs: \(changed.reason)", forGood: true)
        case let status as HTTPStatusFailure where !RetryPolicy.isRetryable(status: status.status):
            verdict = others ? .drop(reason: "answered \(status.status) \(status.reason)", forGood: mirror) : .fail
        default:
            var entry = all[source]
            entry.failures = entry.bytes == entry.bytesAtFailure ? entry.failures + 1 : 1
            entry.bytesAtFailure = entry.bytes
            all[source] = entry
            if entry.failures < limit {
                verdict = .retry
            } else {
                verdict = others ? .drop(reason: AttemptFailure(error, url: entry.url).reason, forGood: false) : .fail
            }
        }
        if case .drop = verdict { all[source].isDropped = true }
        return verdict
    }

    /// Failures in a row of `source`, for the pause before asking it again.
    func failures(_ source: Int) -> Int { all[source].failures }
}
