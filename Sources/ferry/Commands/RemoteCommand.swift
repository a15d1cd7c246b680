import ArgumentParser
import FerryCore
import FerryKit
import FerryServer
import Foundation

struct RemoteCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "remote",
        abstract: "Reach Ferry from phones and laptops: the listeners beyond loopback, over HTTPS.",
        discussion: """
            `ferry remote enable --listen 0.0.0.0:8443` keeps a listener for every start of the \
            daemon (restart it: `ferry service restart`, or stop and start `ferry serve`). \
            `ferry remote` then prints the URLs, the certificate's fingerprint and a QR code of \
            the URL for a phone's camera. Without a certificate of yours, Ferry's own CA signs \
            one: open the URL's /ca.pem on each device once and trust it (it may sign only local \
            names). Users log in with `ferry user add NAME`'s name and \
            password.
              ferry remote enable --listen 0.0.0.0:8443
              ferry remote
              ferry remote enable --listen 0.0.0.0:443 --certificate fullchain.pem --private-key privkey.pem --server-name ferry.example.org
              ferry remote disable
            """,
        subcommands: [RemoteShowCommand.self, RemoteEnableCommand.self, RemoteDisableCommand.self],
        defaultSubcommand: RemoteShowCommand.self
    )
}

struct RemoteShowCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(commandName: "show", abstract: "Print the URLs, fingerprints and a QR code for a phone.")

    @Flag(name: .long, help: "No QR code.") var noQr = false
    @OptionGroup var output: OutputOptions

    func run() async throws {
        let status = try await CLIConnection.connect().remoteStatus()
        if output.json { return try FerryJSON.encoder(pretty: true).printing(status) }
        guard !status.urls.isEmpty else { return Terminal.print("The listeners are starting; ask again in a moment.") }
        Terminal.print("Ferry answers beyond loopback at:")
        for url in status.urls { Terminal.print("  \(url)") }
        if let fingerprint = status.certificateFingerprint { Terminal.print("Certificate (SHA-256): \(fingerprint)") }
        if let ca = status.caFingerprint {
            Terminal.print("Signed by Ferry's own CA (SHA-256): \(ca)")
            Terminal.print("On each device, once: open \(status.caURL ?? "/ca.pem"), install it and trust it for websites; check its fingerprint.")
        }
        Terminal.print("People log in with their own name and password: ferry user add NAME")
        guard !noQr, let url = Self.forPhones(status.urls) else { return }
        guard let code = QRCode(url) else {
            return Terminal.print("(A QR code needs libqrencode: apt install libqrencode4.)")
        }
        Terminal.print("\n\(code.text(ansi: isatty(STDOUT_FILENO) == 1))\n  \(url)")
    }

    /// A phone resolves an address surely, a name perhaps: the first HTTPS URL with an address.
    static func forPhones(_ urls: [String]) -> String? {
        let secure = urls.filter { $0.hasPrefix("https://") }
        return secure.first { url in
            let host = String(url.dropFirst(8).prefix { $0 != "/" })
            return RemoteRules.hostName(host).map { IPRange.bytes($0) != nil } ?? false
        } ?? secure.first ?? urls.first
    }
}

struct RemoteEnableCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "enable", abstract: "Keep listeners beyond loopback for every start of the daemon (from its next start)."
    )

    @OptionGroup var options: RemoteOptions

    func validate() throws {
        guard !options.listen.isEmpty else { throw ValidationError("Say where with --listen ADDRESS:PORT (e.g. --listen 0.0.0.0:8443).") }
    }

    func run() throws {
        let paths = FerryPaths.resolve()
        try RemoteSetting.write(options.settings(), paths)
        Terminal.print(
            "From the daemon's next start (`ferry service restart`, or stop and start `ferry serve`) Ferry answers at \(options.listen.joined(separator: ", ")) over "
                + (options.listen.allSatisfy { $0.lowercased().hasPrefix("http://") } ? "plain HTTP for the proxy." : "HTTPS; then `ferry remote` shows the URLs.")
        )
    }
}

struct RemoteDisableCommand: ParsableCommand {
    static let configuration = CommandConfiguration(commandName: "disable", abstract: "Answer on loopback only again (from the daemon's next start).")

    func run() throws {
        let paths = FerryPaths.resolve()
        try RemoteSetting.write(nil, paths)
        Terminal.print("From the daemon's next start Ferry answers on loopback only.")
    }
}
