import FerryModel
import Foundation

/// A row of the credential store: a host's login with its password, as the journal keeps it.
/// Only the engine reads the password, to answer that host's challenge.
package struct StoredCredential: Sendable, Hashable {
    /// `host` or `host:port`, as ``HostCredential/normalizedHost(_:)`` makes it.
    package var host: String
    package var user: String
    package var password: String
    package var addedAt: Date

    package init(host: String, user: String, password: String, addedAt: Date = Date()) {
        self.host = host
        self.user = user
        self.password = password
        self.addedAt = addedAt
    }

    /// What may be shown.
    package var shown: HostCredential { HostCredential(host: host, user: user, addedAt: addedAt) }
}
