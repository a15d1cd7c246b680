import Foundation

/// The credential store (`ferry credentials`): hosts' logins answered when they ask (401).
extension DaemonClient {
    /// The kept logins, without passwords (an admin's).
    public func credentials() async throws -> HostCredentialList {
        try await send(.GET, "/v1/credentials")
    }

    /// Keeps a login for `host` (`example.com` or `example.com:8443`), replacing the one it had.
    @discardableResult
    public func addCredential(host: String, user: String, password: String) async throws -> HostCredential {
        try await send(.POST, "/v1/credentials", body: HostCredentialRequest(host: host, user: user, password: password))
    }

    /// Forgets the login kept for `host`.
    public func removeCredential(host: String) async throws {
        let _: Empty = try await send(.DELETE, "/v1/credentials/\(host.addingPercentEncoding(withAllowedCharacters: .urlPathAllowed) ?? host)")
    }
}
