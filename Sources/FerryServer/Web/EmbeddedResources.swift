import Foundation

/// The files of `Sources/FerryServer/Resources` (the web app, the OpenAPI document), compiled
/// into the binary by the EmbedResources build plugin, so a `ferry` copied anywhere serves them.
/// The plugin writes ``base64`` at build time; here they are decoded once, on first use.
enum EmbeddedResources {
    /// A file's bytes by its path below `Resources` (`openapi.yaml`, `web/index.html`).
    static func file(_ path: String) -> Data? { decoded[path] }

    /// Every file whose path starts with `prefix`, by the rest of its path.
    static func files(under prefix: String) -> [String: Data] {
        Dictionary(uniqueKeysWithValues: decoded.compactMap { path, data in
            path.hasPrefix(prefix) ? (String(path.dropFirst(prefix.count)), data) : nil
        })
    }

    private static let decoded: [String: Data] = base64.compactMapValues { Data(base64Encoded: $0) }
}
