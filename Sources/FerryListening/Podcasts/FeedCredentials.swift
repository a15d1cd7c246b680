import FerryKit
import Foundation

/// A private feed's credentials. A secret: kept in the journal, answered when the feed's origin
/// asks (Basic or Digest, see ``FeedFetcher``), never shown, logged or put in events.
package struct FeedCredentials: Sendable, Hashable {
    package var user: String
    package var password: String

    package init(user: String, password: String) {
        self.user = user
        self.password = password
    }

    /// Basic authentication cannot carry a `:` in the user name, nor line breaks anywhere.
    package func validate() throws(FerryError) {
        guard !user.isEmpty, !user.contains(":") else {
            throw FerryError.invalidRequest("A feed's user name must not be empty or contain ':'.")
        }
        guard !(user + password).contains(where: { $0.isNewline || $0 == "\0" }) else {
            throw FerryError.invalidRequest("A feed's user name and password must not contain line breaks.")
        }
    }

    /// The URL without `user:password@`, and those credentials if it had them.
    package static func split(_ url: URL) throws(FerryError) -> (URL, FeedCredentials?) {
        guard var components = URLComponents(url: url, resolvingAgainstBaseURL: false), let user = components.user else { return (url, nil) }
        let credentials = FeedCredentials(user: user, password: components.password ?? "")
        try credentials.validate()
        components.user = nil
        components.password = nil
        return (components.url ?? url, credentials)
    }
}
