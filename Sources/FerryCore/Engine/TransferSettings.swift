import FerryModel
import Foundation

/// The options that apply to one transfer: the daemon's, its session's and its own, each layer
/// overriding the one before. Bandwidth limits are not merged: each layer's limit covers a
/// different set of transfers (all of them, the session's, this one), so all three apply.
struct TransferSettings: Sendable {
    var daemon = TransferOptions()
    var session = TransferOptions()
    var own = TransferOptions()
    /// The transfer's session, whose cookie jar its requests use.
    var sessionName: String?

    /// The layers merged; `insecure` is the transfer's own only: a session's was copied into each
    /// transfer made while it was set (see ``TransferEngine/enqueueRecords(_:)``), so that what a
    /// list says of a transfer is what it does.
    var merged: TransferOptions {
        var merged = daemon.overridden(by: session).overridden(by: own)
        merged.insecure = own.insecure
        return merged
    }

    /// Extra request headers, in a stable order.
    var headers: [(name: String, value: String)] {
        (merged.headers ?? [:]).sorted { $0.key.lowercased() < $1.key.lowercased() }.map { ($0.key, $0.value) }
    }

    /// How long a server may take to answer with a response head; nil leaves it to the HTTP
    /// client's connect timeout.
    var headTimeout: Duration? { merged.connectTimeoutSeconds.map { .seconds($0) } }

    /// How long a transfer may go without a byte before the attempt fails as stalled.
    var idleTimeout: Duration? { merged.idleTimeoutSeconds.map { .seconds($0) } }

    /// The engine's retry policy with this transfer's retry limit and resource timeout.
    func retryPolicy(_ base: RetryPolicy) -> RetryPolicy {
        var policy = base
        if let retries = merged.maxRetries { policy.maxAttempts = retries + 1 }
        if let seconds = merged.resourceTimeoutSeconds { policy.resourceTimeout = .seconds(seconds) }
        return policy
    }
}

extension TransferJournal {
    /// The daemon's and `record`'s session's options, and the transfer's own.
    func settings(for record: TransferRecord) async throws -> TransferSettings {
        TransferSettings(
            daemon: try await daemonOptions(), session: try await sessionOptions(record.session),
            own: record.transferOptions ?? TransferOptions(), sessionName: record.session
        )
    }
}
