import ArgumentParser
import FerryKit
import Foundation

/// Who `get` says the user is when a server asks (401): `--user` with `--password-stdin`, a
/// `.netrc`, and whether stored passwords may go over plain http.
struct AuthFlags: ParsableArguments {
    @Option(name: .long, help: ArgumentHelp("Log in as this user when the URL's server asks (Basic or Digest, the strongest it offers); sent to the URL's own scheme, host and port only, never to a host a redirect leads to. The password comes from --password-stdin, else from the .netrc or `ferry credentials` for that user.", valueName: "name"))
    var user: String?

    @Flag(name: .long, help: "Read --user's password from standard input (its first line). The daemon keeps it like a proxy's password: never shown, sealed in backups.")
    var passwordStdin = false

    @Flag(name: .long, help: "Take logins from ~/.netrc (machine, login, password), read by the daemon when a server asks; it must be readable by you alone (chmod 600).")
    var netrc = false

    @Option(name: .long, help: ArgumentHelp("Take logins from this .netrc file instead of ~/.netrc (chmod 600).", valueName: "file"))
    var netrcFile: String?

    @Flag(name: .long, help: "Let passwords from a .netrc or `ferry credentials` go over plain http, where anyone on the way can read them (never without this; --user's own password goes to its URL regardless).")
    var authOverHTTP = false

    func check(inputFromStdin: Bool) throws {
        if passwordStdin, user == nil { throw ValidationError("--password-stdin reads --user's password: give --user NAME too.") }
        if passwordStdin, inputFromStdin { throw ValidationError("Standard input cannot give both the password and the URLs (-i -).") }
        if netrc, netrcFile != nil { throw ValidationError("Give --netrc or --netrc-file FILE, not both.") }
    }

    /// Sets the options these flags give, reading the password from standard input if asked.
    func apply(to options: inout TransferOptions?) throws {
        guard user != nil || netrc || netrcFile != nil || authOverHTTP else { return }
        var result = options ?? TransferOptions()
        result.user = user
        if passwordStdin { result.password = try PasswordInput.readStdin() }
        if netrc { result.netrcFile = TransferOptionFlags.absolutePath("~/.netrc") }
        if let netrcFile { result.netrcFile = TransferOptionFlags.absolutePath(netrcFile) }
        result.authOverHTTP = authOverHTTP ? true : nil
        options = result
    }
}
