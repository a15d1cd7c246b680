import ArgumentParser
import FerryKit
import FerryServer
import Foundation

/// Where a passphrase comes from: a file, standard input, or the terminal.
struct PassphraseOptions: ParsableArguments {
    @Option(name: .long, help: ArgumentHelp("Read the passphrase from the first line of this file.", valueName: "file"))
    var passphraseFile: String?

    @Flag(name: .long, help: "Read the passphrase from standard input.")
    var passphraseStdin = false

    func validate() throws {
        if passphraseFile != nil, passphraseStdin { throw ValidationError("--passphrase-file and --passphrase-stdin do not go together.") }
    }

    /// The passphrase given, else asked at the terminal (twice when it makes a new one).
    func read(confirming: Bool) throws -> String {
        if let passphraseFile {
            guard let text = try? String(contentsOfFile: passphraseFile, encoding: .utf8) else {
                throw ValidationError("Cannot read the passphrase file \(passphraseFile).")
            }
            let line = text.split(separator: "\n", omittingEmptySubsequences: false).first.map(String.init) ?? ""
            guard !line.isEmpty else { throw ValidationError("The passphrase file \(passphraseFile) is empty.") }
            return line
        }
        if passphraseStdin { return try PasswordInput.readStdin() }
        guard isatty(STDIN_FILENO) == 1 else { throw ValidationError("No terminal to ask for the passphrase: use --passphrase-file or --passphrase-stdin.") }
        if confirming { return try PasswordInput.prompt("Passphrase for the secrets: ") }
        return PasswordInput.readHidden("The backup's passphrase: ")
    }
}

struct BackupCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "backup",
        abstract: "Write everything Ferry keeps into one file, while it runs; `ferry restore` brings it back.",
        discussion: """
            The backup is one SQLite file: a consistent snapshot of the journal made with SQLite's \
            online backup (downloads go on meanwhile) with every transfer and its options, \
            sessions, accounts, subscriptions, positions, Up Next and sync state, plus the \
            listeners' settings. The library's files are not in it: copy the library folder \
            (`ferry status` names it) beside the backup.

            Secrets stay out unless --with-secrets: the API token, the aria2 secret, the browser \
            extension's pairing, Ferry's certificate authority, private feeds' passwords and \
            sensitive headers and proxy credentials in options. With it they are sealed with a \
            passphrase (scrypt and AES-GCM); `ferry restore` asks for it.

            A cluster's journal is in PostgreSQL: back it up with `pg_dump` (docs/CLUSTER.md).
            """
    )

    @Argument(help: ArgumentHelp("The backup file to write.", valueName: "file"))
    var file: String

    @Flag(name: .long, help: "Include the secrets, sealed with a passphrase.")
    var withSecrets = false

    @Flag(name: .long, help: "Replace the file if it exists.")
    var force = false

    @OptionGroup var passphrase: PassphraseOptions

    @OptionGroup var output: OutputOptions

    func validate() throws {
        if !withSecrets, passphrase.passphraseFile != nil || passphrase.passphraseStdin {
            throw ValidationError("A passphrase seals the secrets: add --with-secrets.")
        }
    }

    func run() async throws {
        let target = URL(fileURLWithPath: file).standardizedFileURL
        if FileManager.default.fileExists(atPath: target.path), !force {
            throw FerryError(.invalidRequest, "\(target.path) exists; name another file, or add --force to replace it.")
        }
        let secret = withSecrets ? try passphrase.read(confirming: true) : nil
        let paths = CLIConnection.paths
        let summary = try JournalBackup.write(paths: paths, to: target, passphrase: secret)
        if output.json {
            try FerryJSON.encoder(pretty: true).printing(summary)
            return
        }
        Terminal.print(
            "Backed up \(summary.transfers) transfers, \(summary.podcasts) podcasts and \(summary.accounts) accounts to \(summary.file) (\(ByteText.format(summary.bytes)))."
        )
        Terminal.print(
            summary.secrets
                ? "Secrets are in it, sealed with your passphrase."
                : "Secrets are not in it (--with-secrets adds them): on a new machine the API token and Ferry's certificate are new, and private feeds need their passwords again."
        )
        Terminal.print("The library's files are not in it: copy \(paths.library.path) too.")
    }
}

struct RestoreCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "restore",
        abstract: "Bring back a `ferry backup` file into an empty Ferry (a new machine, a new FERRY_HOME).",
        discussion: """
            The daemon must not be running, and the state folder must hold no transfers, podcasts \
            or accounts. Files of finished downloads are found where the library folder has them: \
            copy the old library folder into this machine's (`ferry status` names it) before or \
            after restoring; the report lists those not found. A backup with secrets asks for its \
            passphrase (a wrong one restores nothing); --without-secrets restores the rest. A \
            backup written by a newer Ferry is refused.
            """
    )

    @Argument(help: ArgumentHelp("The backup file.", valueName: "file"))
    var file: String

    @Flag(name: .long, help: "Restore without the backup's secrets (no passphrase asked).")
    var withoutSecrets = false

    @OptionGroup var passphrase: PassphraseOptions

    @OptionGroup var output: OutputOptions

    func run() async throws {
        let source = URL(fileURLWithPath: file).standardizedFileURL
        guard FileManager.default.isReadableFile(atPath: source.path) else { throw FerryError(.notFound, "Cannot read \(source.path).") }
        let paths = CLIConnection.paths
        if await DaemonConnector(paths: paths).running() != nil {
            throw FerryError(.invalidState, "Ferry is running for \(paths.state.path); stop it first (`ferry stop`, or `ferry service stop`).")
        }
        let lock = try DaemonLock(paths: paths)
        defer { withExtendedLifetime(lock) {} }
        let manifest = try JournalBackup.manifest(of: source)
        let secret = manifest.hasSecrets && !withoutSecrets ? try passphrase.read(confirming: false) : nil
        let restored = try JournalBackup.restore(source, into: paths, passphrase: secret, tables: journalTables)
        if output.json {
            try FerryJSON.encoder(pretty: true).printing(restored)
            return
        }
        Terminal.print(
            "Restored \(restored.transfers) transfers, \(restored.podcasts) podcasts and \(restored.accounts) accounts from a backup of Ferry \(restored.writtenBy)."
        )
        Terminal.print(restored.secrets ? "Secrets restored." : manifest.hasSecrets ? "Secrets not restored (--without-secrets)." : "The backup had no secrets.")
        if restored.filesMissing.isEmpty {
            Terminal.print("All \(restored.filesFound) finished downloads' files are in \(paths.library.path).")
        } else {
            Terminal.print(
                "\(restored.filesFound) finished downloads' files found; \(restored.filesMissing.count) not (yet): copy \(restored.oldLibrary) into \(paths.library.path). For example:"
            )
            for path in restored.filesMissing.prefix(5) { Terminal.print("  \(path)") }
        }
        Terminal.print("`ferry serve` (or `ferry service install`) starts Ferry with it.")
    }
}
