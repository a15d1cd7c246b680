import FerryKit
import FerryTestSupport
import Foundation
import Testing

/// The real `ferry` binary: autostarting the daemon, output, exit statuses, error messages.
@Suite(.serialized) struct CLITests {
    private func withHome(_ body: (URL) async throws -> Void) async throws {
        try await CommandRunner.withHome(body)
    }

    private func transfers(_ output: CommandRunner.Output) throws -> [Transfer] {
        try FerryJSON.decoder().decode([Transfer].self, from: Data(output.stdout.utf8))
    }

    @Test func helpTeaches() async throws {
        try await withHome { home in
            let help = try await CommandRunner.ferry(["--help"], home: home)
            #expect(help.status == 0)
            for command in ["get", "ls", "wait", "pause", "resume", "cancel", "rm", "status", "serve", "stop"] {
                #expect(help.stdout.contains("  \(command)"), "\(command) in --help")
            }
            #expect(help.stdout.contains("FERRY_HOME"))
            let get = try await CommandRunner.ferry(["get", "--help"], home: home)
            #expect(get.stdout.contains("Exit status"))
            #expect(get.stdout.contains("--no-wait"))
            for flag in ["--user <name>", "--password-stdin", "--netrc ", "--netrc-file <file>", "--auth-over-http"] {
                #expect(get.stdout.contains(flag), "get --help teaches \(flag)")
            }
            let credentials = try await CommandRunner.ferry(["credentials", "--help"], home: home)
            #expect(credentials.stdout.contains("ferry credentials add files.example.com --user ann"))
            // --help never starts a daemon.
            #expect(CommandRunner.daemonInfo(home: home) == nil)
        }
    }

    @Test func badURLsGiveOneClearLineAndNoTransfer() async throws {
        try await withHome { home in
            let bad = try await CommandRunner.ferry(["get", "--no-wait", "notaurl"], home: home)
            #expect(bad.status == 1)
            #expect(bad.stderr.hasPrefix("ferry: "))
            #expect(bad.stderr.contains("'notaurl' is not a valid URL"))
            #expect(bad.stderr.split(separator: "\n").count == 1)
            let ftp = try await CommandRunner.ferry(["get", "--no-wait", "ftp://127.0.0.1/x"], home: home)
            #expect(ftp.status == 1)
            #expect(ftp.stderr.contains("only http and https"))
            let list = try await CommandRunner.ferry(["ls", "--all", "--json"], home: home)
            #expect(try transfers(list).isEmpty)
            let unknown = try await CommandRunner.ferry(["pause", "999"], home: home)
            #expect(unknown.status == 1)
            #expect(unknown.stderr.contains("There is no transfer 999"))
            let usage = try await CommandRunner.ferry(["pause", "abc"], home: home)
            #expect(usage.status != 0 && usage.status != 1)
        }
    }

    @Test func getWaitsPrintsThePathAndExitsZero() async throws {
        let file = Origin.File(data: Origin.bytes(700_000))
        try await Origin.run { origin, base in
            origin.serve("/music/track.m4a", file)
            origin.script("/missing", [.status(404)])
            try await withHome { home in
                let url = base.appendingPathComponent("music/track.m4a").absoluteString
                let get = try await CommandRunner.ferry(["get", url], home: home)
                #expect(get.status == 0, "\(get)")
                let path = home.appendingPathComponent("library/Downloads/track.m4a").path
                #expect(get.stdout.contains(path))
                #expect(get.stdout.contains(file.sha256))
                #expect(try Data(contentsOf: URL(fileURLWithPath: path)).sha256Hex == file.sha256)

                // JSON output has the stable keys.
                let json = try await CommandRunner.ferry(["get", "--json", url], home: home)
                let object = try JSONSerialization.jsonObject(with: Data(json.stdout.utf8)) as! [[String: Any]]
                for key in ["id", "url", "session", "state", "bytesReceived", "totalBytes", "path", "sha256", "error"] {
                    #expect(object[0].keys.contains(key), "\(key)")
                }
                #expect(object[0]["state"] as? String == "completed")

                let missing = try await CommandRunner.ferry(["get", base.appendingPathComponent("missing").absoluteString], home: home)
                #expect(missing.status == 1)
                #expect(missing.stdout.contains("404"))
            }
        }
    }

    /// `ferry get URL --mirror URL2`: a mirror that 404s is dropped with a note in `--json`, and
    /// the file comes whole from the URL; --mirror with two URLs is refused before anything runs.
    @Test func getWithAMirrorThatIsMissing() async throws {
        let file = Origin.File(data: Origin.bytes(3_000_000), bytesPerSecond: 1_500_000)
        try await Origin.run { origin, base in
            origin.serve("/iso", file)
            try await withHome { home in
                let url = base.appendingPathComponent("iso").absoluteString
                let mirror = base.appendingPathComponent("elsewhere/iso").absoluteString
                let two = try await CommandRunner.ferry(["get", "--mirror", mirror, url, url + "?2"], home: home)
                #expect(two.status != 0 && two.stderr.contains("--mirror goes with one URL"), "\(two)")
                let get = try await CommandRunner.ferry(["get", "--json", "-x", "4", "--mirror", mirror, url], home: home)
                #expect(get.status == 0, "\(get)")
                let done = try transfers(get)[0]
                #expect(done.sha256 == file.sha256)
                #expect(done.mirrors == [TransferMirror(url: mirror, dropped: "answered 404 Not Found")])
                #expect(origin.requests(for: "/elsewhere/iso").count >= 1)
            }
        }
    }

    /// `ferry get FILE.meta4`: each file of the Metalink from its mirrors (a country's first with
    /// --metalink-location), checked against its digest; options that name one file are refused.
    @Test func getAMetalinkFile() async throws {
        let a = Origin.File(data: Origin.bytes(200_000, seed: 21)), b = Origin.File(data: Origin.bytes(90_000, seed: 22))
        try await Origin.run { origin, base in
            origin.serve("/de/a.bin", a)
            origin.serve("/fr/a.bin", a)
            origin.serve("/b.bin", b)
            try await withHome { home in
                let url = { @Sendable (path: String) in base.appendingPathComponent(path).absoluteString }
                let document = """
                    <?xml version="1.0" encoding="UTF-8"?>
                    <metalink xmlns="urn:ietf:params:xml:ns:metalink">
                      <file name="a.bin"><hash type="sha-256">\(a.sha256)</hash>
                        <url location="fr" priority="1">\(url("fr/a.bin"))</url><url location="de" priority="2">\(url("de/a.bin"))</url></file>
                      <file name="set/b.bin"><hash type="sha-256">\(b.sha256)</hash><url>\(url("b.bin"))</url></file>
                    </metalink>
                    """
                let path = home.appendingPathComponent("files.meta4")
                try document.write(to: path, atomically: true, encoding: .utf8)
                let refused = try await CommandRunner.ferry(["get", "-o", "x.bin", path.path], home: home)
                #expect(refused.status != 0 && refused.stderr.contains("A Metalink names its files"), "\(refused)")
                let alone = try await CommandRunner.ferry(["get", "--metalink-location", "de", url("b.bin")], home: home)
                #expect(alone.status != 0 && alone.stderr.contains("--metalink-location goes with a Metalink"), "\(alone)")

                let get = try await CommandRunner.ferry(["get", "--json", "--metalink-location", "de", path.path], home: home)
                #expect(get.status == 0, "\(get)")
                let done = try transfers(get)
                #expect(done.map(\.sha256) == [a.sha256, b.sha256])
                #expect(done[0].url == url("de/a.bin"), "the country asked for first")
                #expect(done[1].path == home.appendingPathComponent("library/Downloads/set/b.bin").path)
            }
        }
    }

    /// `ferry session forget`: what went, in words and as JSON; the daemon itself refused.
    @Test func sessionForgetSaysWhatWentAndRefusesTheDaemon() async throws {
        try await Origin.run { origin, base in
            origin.serve("/f", .init(data: Origin.bytes(1000)))
            try await withHome { home in
                let got = try await CommandRunner.ferry(["get", "--session", "gone", base.appendingPathComponent("f").absoluteString], home: home)
                #expect(got.status == 0, "\(got)")
                let forgot = try await CommandRunner.ferry(["session", "forget", "gone"], home: home)
                #expect(forgot.status == 0, "\(forgot)")
                #expect(forgot.stdout.contains("Forgot session gone: ") && forgot.stdout.contains("events deleted, no unfinished transfers."), "\(forgot)")
                #expect(!forgot.stdout.contains(": 0 events"), "its download's events went: \(forgot.stdout)")
                let again = try await CommandRunner.ferry(["session", "forget", "gone", "--json"], home: home)
                let json = try FerryJSON.decoder().decode(ForgottenSession.self, from: Data(again.stdout.utf8))
                #expect(json.name == "gone" && json.eventsDeleted == 0 && json.cancelled.isEmpty)
                let daemon = try await CommandRunner.ferry(["session", "forget", "*"], home: home)
                #expect(daemon.status != 0 && daemon.stderr.contains("the daemon itself"), "\(daemon)")
                let list = try await CommandRunner.ferry(["ls", "--all", "--json"], home: home)
                #expect(try transfers(list).first?.state == .completed, "its finished download stays")
            }
        }
    }

    /// `ferry get -o RELATIVE --checksum`: the path is the caller's, the file lands there under
    /// its name with the checksum recorded; a wrong checksum fails with both digests and leaves
    /// no file; a missing folder is refused before anything is queued, and --mkdir makes it.
    @Test func getWithAnOutputPathAndAChecksum() async throws {
        let data = Origin.bytes(400_000)
        try await Origin.run { origin, base in
            origin.serve("/file", .init(data: data))
            try await withHome { home in
                let here = home.appendingPathComponent("here")
                try FileManager.default.createDirectory(at: here.appendingPathComponent("isos"), withIntermediateDirectories: true)
                let url = base.appendingPathComponent("file").absoluteString
                let sha = Digests.hex(data, .sha256)
                let get = try await CommandRunner.ferry(
                    ["get", "--json", "-o", "isos/x.iso", "--checksum", "sha-256=\(sha)", url], home: home, workingDirectory: here
                )
                #expect(get.status == 0, "\(get)")
                let done = try transfers(get)[0]
                #expect(done.path == here.appendingPathComponent("isos/x.iso").path)
                #expect(done.verifiedBy == ["checksum sha-256"])
                let md5 = Digests.hex(Origin.bytes(5), .md5)
                let wrong = try await CommandRunner.ferry(
                    ["get", "--force", "-o", "isos/y.iso", "--checksum", "md5=\(md5)", url], home: home, workingDirectory: here
                )
                #expect(wrong.status == 1)
                #expect(wrong.stdout.contains(md5) || wrong.stderr.contains(md5), "\(wrong)")
                #expect(!FileManager.default.fileExists(atPath: here.appendingPathComponent("isos/y.iso").path))
                let missing = try await CommandRunner.ferry(["get", "-o", "nowhere/z.iso", url], home: home, workingDirectory: here)
                #expect(missing.status != 0 && missing.stderr.contains("does not exist"), "\(missing)")
                let made = try await CommandRunner.ferry(["get", "--force", "--mkdir", "--dir", "made", url], home: home, workingDirectory: here)
                #expect(made.status == 0, "\(made)")
                #expect(FileManager.default.fileExists(atPath: here.appendingPathComponent("made/file").path))
                let bad = try await CommandRunner.ferry(["get", "--checksum", "sha-256=12", url], home: home)
                #expect(bad.status != 0 && bad.stderr.contains("64 hex digits"), "\(bad)")
            }
        }
    }

    /// `ferry get -i FILE`, aria2c's input file: plain lines, a line with a mirror after a tab
    /// and out=, dir= and checksum= below it; a bad line refuses the whole file before anything
    /// is queued; `-i -` reads standard input.
    @Test func getReadsAnInputFile() async throws {
        let data = (1...3).map { Origin.bytes(50_000, seed: UInt64($0)) }
        try await Origin.run { origin, base in
            for n in 1...3 { origin.serve("/\(n).bin", .init(data: data[n - 1])) }
            try await withHome { home in
                let here = home.appendingPathComponent("here")
                try FileManager.default.createDirectory(at: here.appendingPathComponent("picked"), withIntermediateDirectories: true)
                let url = { (n: Int) in base.appendingPathComponent("\(n).bin").absoluteString }
                let list = """
                    # three files
                    \(url(1))
                    \(base.appendingPathComponent("missing.bin").absoluteString)\t\(url(2))
                      dir=picked
                      out=two.bin
                      checksum=sha-1=\(Digests.hex(data[1], .sha1))

                    \(url(3))
                    """
                try list.write(to: here.appendingPathComponent("list.txt"), atomically: true, encoding: .utf8)
                let bad = try await CommandRunner.ferry(["get", "-i", "-"], home: home, input: "  out=x\n\(url(1))\n", workingDirectory: here)
                #expect(bad.status != 0 && bad.stderr.contains("Line 1"), "\(bad)")
                let unknown = try await CommandRunner.ferry(["get", "-i", "-"], home: home, input: "\(url(1))\n  split=4\n", workingDirectory: here)
                #expect(unknown.status != 0 && unknown.stderr.contains("Line 2") && unknown.stderr.contains("split"), "\(unknown)")
                let empty = try await CommandRunner.ferry(["ls", "--all", "--json"], home: home)
                #expect(try transfers(empty).isEmpty, "nothing queued by a refused file")
                let get = try await CommandRunner.ferry(["get", "--json", "-i", "list.txt"], home: home, workingDirectory: here)
                #expect(get.status == 0, "\(get)")
                let done = try transfers(get)
                #expect(done.count == 3)
                #expect(done.allSatisfy { $0.state == .completed })
                let two = done.first { $0.url.hasSuffix("missing.bin") }
                #expect(two?.path == here.appendingPathComponent("picked/two.bin").path)
                #expect(two?.verifiedBy == ["checksum sha-1"])
                #expect(two?.mirrors?.first?.url == url(2))
            }
        }
    }

    /// A list longer than one request (10,000 URLs a batch) is queued and said in the file's
    /// order, whole, though each batch's answer is read while the next is queued: as lines,
    /// and as one JSON array.
    @Test func aLongListIsQueuedAndSaidInItsOrder() async throws {
        let count = 21_000
        try await withHome { home in
            let urls = (1...count).map { "http://127.0.0.1:9/later/\($0).bin" }
            let json = try await CommandRunner.ferry(["get", "--no-wait", "--json", "--at", "+1d", "-i", "-"], home: home, input: urls.joined(separator: "\n"))
            #expect(json.status == 0, "\(json.stderr)")
            let said = try transfers(json)
            #expect(said.map(\.url) == urls)
            #expect(zip(said, said.dropFirst()).allSatisfy { $0.id < $1.id })
            let plain = try await CommandRunner.ferry(["get", "--no-wait", "--force", "--at", "+1d", "-i", "-"], home: home, input: urls.joined(separator: "\n"))
            #expect(plain.status == 0, "\(plain.stderr)")
            let lines = plain.stdout.split(separator: "\n")
            #expect(lines.count == count)
            #expect(lines.map { $0.split(separator: " ").last.map(String.init) ?? "" } == urls)
            #expect(lines.allSatisfy { $0.split(separator: " ")[1] == "queued" })
        }
    }

    /// A downloaded file deleted behind Ferry's back: `ferry ls` says missing, --json has
    /// fileMissing, and `ferry get` of the same URL downloads it again.
    @Test func aDeletedFileShowsMissingAndComesBack() async throws {
        let data = Origin.bytes(40_000)
        try await Origin.run { origin, base in
            origin.serve("/gone.bin", .init(data: data))
            try await withHome { home in
                let url = base.appendingPathComponent("gone.bin").absoluteString
                let first = try transfers(try await CommandRunner.ferry(["get", "--json", url], home: home))[0]
                try FileManager.default.removeItem(atPath: first.path!)
                let list = try await CommandRunner.ferry(["ls", "--all"], home: home)
                #expect(list.stdout.contains("missing"), "\(list)")
                let json = try transfers(try await CommandRunner.ferry(["ls", "--all", "--json"], home: home))
                #expect(json.map(\.fileMissing) == [true])
                let again = try transfers(try await CommandRunner.ferry(["get", "--json", url], home: home))[0]
                #expect(again.id != first.id && again.state == .completed && again.fileMissing == nil)
                #expect(try Data(contentsOf: URL(fileURLWithPath: again.path!)) == data)
            }
        }
    }

    @Test func waitTimesOutWith124AndTheTransferGoesOn() async throws {
        let gate = Origin.Gate()
        try await Origin.run { origin, base in
            origin.serve("/slow", .init(data: Origin.bytes(3_000_000)))
            origin.script("/slow", [.holdAfter(1_000_000, gate)])  // until paused
            try await withHome { home in
                let queued = try await CommandRunner.ferry(["get", "--no-wait", "--json", base.appendingPathComponent("slow").absoluteString], home: home)
                let id = try transfers(queued)[0].id
                let wait = try await CommandRunner.ferry(["wait", String(id), "--timeout", "0.5"], home: home)
                #expect(wait.status == 124)
                #expect(wait.stderr.contains("Timed out"))
                let paused = try await CommandRunner.ferry(["pause", String(id)], home: home)
                #expect(paused.status == 0)
                let list = try transfers(try await CommandRunner.ferry(["ls", "--json"], home: home))
                #expect(list.map(\.state) == [.paused])
                #expect(list.map(\.bytesReceived) == [1_000_000])
                gate.open()
                _ = try await CommandRunner.ferry(["resume", String(id)], home: home)
                let done = try await CommandRunner.ferry(["wait", String(id), "--json"], home: home)
                #expect(done.status == 0, "\(done)")
                #expect(try transfers(done)[0].sha256 == Origin.bytes(3_000_000).sha256Hex)
            }
        }
    }

    @Test func statusAndStop() async throws {
        try await withHome { home in
            let before = try await CommandRunner.ferry(["status"], home: home)
            #expect(before.status == 1)
            #expect(before.stdout.contains("not running"))
            let serve = try await CommandRunner.ferry(["serve", "--detach"], home: home)
            #expect(serve.status == 0, "\(serve)")
            let status = try await CommandRunner.ferry(["status", "--json"], home: home)
            #expect(status.status == 0)
            let decoded = try FerryJSON.decoder().decode(DaemonStatus.self, from: Data(status.stdout.utf8))
            #expect(decoded.libraryPath == home.appendingPathComponent("library").path)
            let again = try await CommandRunner.ferry(["serve", "--detach"], home: home)
            #expect(again.stdout.contains("already running"))
            let stop = try await CommandRunner.ferry(["stop"], home: home)
            #expect(stop.status == 0)
            #expect(stop.stdout.contains("Stopped"))
            #expect(CommandRunner.daemonInfo(home: home) == nil)
        }
    }

    @Test func aDaemonThatCannotStartSaysWhy() async throws {
        // Something else owns the port.
        try await Origin.run { _, base in
            try await withHome { home in
                let result = try await CommandRunner.ferry(["ls"], home: home, extraEnvironment: ["FERRY_PORT": String(base.port!)])
                #expect(result.status == 1)
                #expect(result.stderr.contains("Port \(base.port!)"), "\(result)")
                #expect(result.stderr.contains("already in use"))
            }
        }
    }
}
