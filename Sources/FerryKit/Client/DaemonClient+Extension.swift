import Foundation

/// The browser extension's pairing (`ferry extension pair`, `status`, `revoke`).
extension DaemonClient {
    /// A one-time pairing code for the browser extension (the API token only).
    public func extensionPairingCode() async throws -> ExtensionPairingCode {
        try await send(.POST, "/v1/extension/pairing-codes")
    }

    /// Whether an extension is paired, and since when.
    public func extensionStatus() async throws -> ExtensionStatus {
        try await send(.GET, "/v1/extension")
    }

    /// Invalidates the extension's token: its next request gets 401 until it is paired again.
    /// - Returns: what was paired before.
    @discardableResult
    public func revokeExtension() async throws -> ExtensionStatus {
        try await send(.DELETE, "/v1/extension")
    }
}
