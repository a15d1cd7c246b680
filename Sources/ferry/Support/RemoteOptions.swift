import ArgumentParser
import FerryKit
import FerryServer
import Foundation

/// `ferry serve`'s and `ferry remote enable`'s options for the listeners beyond loopback.
struct RemoteOptions: ParsableArguments {
    @Option(name: .long, help: ArgumentHelp("Serve the web app and the API here too, over HTTPS: PORT, ADDRESS:PORT, or http://ADDRESS:PORT for a reverse proxy (repeatable).", valueName: "address:port"))
    var listen: [String] = []

    @Option(name: .long, help: ArgumentHelp("Your certificate chain (PEM), read again when it changes; without it Ferry's own CA signs one.", valueName: "file"))
    var certificate: String?

    @Option(name: .long, help: ArgumentHelp("Its private key (PEM).", valueName: "file"))
    var privateKey: String?

    @Option(name: .long, help: ArgumentHelp("A name browsers reach this machine by (repeatable; default: its host name and NAME.local).", valueName: "name"))
    var serverName: [String] = []

    @Option(name: .long, help: ArgumentHelp("A reverse proxy's address or CIDR range whose X-Forwarded-* headers count (repeatable).", valueName: "cidr"))
    var trustedProxy: [String] = []

    func validate() throws {
        guard listen.isEmpty else { return try check(settings()) }
        if certificate != nil || privateKey != nil || !serverName.isEmpty || !trustedProxy.isEmpty {
            throw ValidationError("--certificate, --private-key, --server-name and --trusted-proxy go with --listen.")
        }
    }

    /// What was given, with the certificate's paths made absolute; nil without --listen.
    func settings() -> RemoteSettings {
        RemoteSettings(
            listen: listen, certificate: certificate.map(TransferOptionFlags.absolutePath), privateKey: privateKey.map(TransferOptionFlags.absolutePath),
            serverNames: serverName, trustedProxies: trustedProxy
        )
    }

    /// The same checks the daemon makes, before anything starts.
    func check(_ settings: RemoteSettings) throws {
        do {
            _ = try RemoteListeners.check(settings)
        } catch {
            throw ValidationError(error.message)
        }
        for file in [settings.certificate, settings.privateKey].compactMap({ $0 }) where !FileManager.default.isReadableFile(atPath: file) {
            throw ValidationError("Cannot read \(file).")
        }
    }

    /// The arguments that give the same to a detached `ferry serve`.
    var arguments: [String] {
        listen.flatMap { ["--listen", $0] } + (certificate.map { ["--certificate", TransferOptionFlags.absolutePath($0)] } ?? [])
            + (privateKey.map { ["--private-key", TransferOptionFlags.absolutePath($0)] } ?? []) + serverName.flatMap { ["--server-name", $0] }
            + trustedProxy.flatMap { ["--trusted-proxy", $0] }
    }
}

/// The daemon setting `ferry remote enable` writes (`remote.json` in the state folder).
enum RemoteSetting {
    static func read(_ paths: FerryPaths) throws -> RemoteSettings? {
        do {
            return try ListenerSettingFiles(paths: paths).remote()
        } catch {
            throw ValidationError(error.message)
        }
    }

    static func write(_ settings: RemoteSettings?, _ paths: FerryPaths) throws {
        try ListenerSettingFiles(paths: paths).setRemote(settings)
    }
}
