import FerryKit
import FerryTestSupport
import Foundation
import Testing

/// Proxy settings from the command line and the daemon's environment: clear errors, nothing
/// journaled, credentials never echoed.
@Suite(.serialized) struct ProxyCLITests {
    @Test func aProxyWithAnUnknownSchemeIsRefusedAndNothingIsQueued() async throws {
        try await CommandRunner.withHome { home in
            let get = try await CommandRunner.ferry(["get", "--no-wait", "--proxy", "ftp://ann:hunter2@proxy:21", "http://127.0.0.1:9/x"], home: home)
            #expect(get.status != 0)
            #expect(get.stderr.contains("uses ftp://, which Ferry does not speak; use http://, socks5:// or socks5h://"), "\(get.stderr)")
            #expect(!get.stderr.contains("hunter2"))
            let both = try await CommandRunner.ferry(["get", "--no-wait", "--proxy", "http://p:1", "--no-proxy", "http://127.0.0.1:9/x"], home: home)
            #expect(both.status != 0)
            #expect(both.stderr.contains("--proxy or --no-proxy, not both"), "\(both.stderr)")
            let list = try await CommandRunner.ferry(["ls", "--all", "--json"], home: home)
            #expect(try FerryJSON.decoder().decode([Transfer].self, from: Data(list.stdout.utf8)).isEmpty)
        }
    }

    @Test func theDaemonRefusesToStartWithAProxyVariableItCannotUse() async throws {
        try await CommandRunner.withHome { home in
            let serve = try await CommandRunner.ferry(["serve"], home: home, extraEnvironment: ["https_proxy": "gopher://ann:hunter2@x:70"])
            #expect(serve.status != 0)
            #expect(serve.stderr.contains("The daemon's environment names a proxy it cannot use: https_proxy: The proxy 'gopher://ann:<redacted>@x:70' uses gopher://"), "\(serve.stderr)")
            #expect(!serve.stderr.contains("hunter2"))
        }
    }

    @Test func aSessionShowsItsProxyWithThePasswordRedacted() async throws {
        try await CommandRunner.withHome { home in
            let set = try await CommandRunner.ferry(["session", "set", "cli", "--proxy", "http://ann:hunter2@127.0.0.1:3128"], home: home)
            #expect(set.status == 0, "\(set)")
            #expect(set.stdout.contains("proxy           http://ann:<redacted>@127.0.0.1:3128"), "\(set.stdout)")
            let json = try await CommandRunner.ferry(["session", "show", "cli", "--json"], home: home)
            #expect(!json.stdout.contains("hunter2") && json.stdout.contains("<redacted>"))
            let cleared = try await CommandRunner.ferry(["session", "set", "cli", "--clear", "proxy"], home: home)
            #expect(!cleared.stdout.contains("proxy "), "\(cleared.stdout)")
        }
    }
}

/// `ferry podcast add --user NAME --password-stdin` for a private feed.
@Suite(.serialized) struct PrivateFeedCLITests {
    @Test func aPrivateFeedTakesItsPasswordOnStandardInput() async throws {
        try await Origin.run { origin, base in
            let feed = TestFeed(title: "Private Show", items: [
                TestFeed.Item(guid: "1", title: "One", published: "Wed, 01 May 2024 10:00:00 +0000", enclosure: base.appendingPathComponent("1.mp3").absoluteString)
            ])
            origin.serve("/feed.xml", .init(data: feed.data, contentType: "application/rss+xml"))
            origin.protect("/feed.xml", user: "me", password: "let me in")
            try await CommandRunner.withHome { home in
                let url = base.appendingPathComponent("feed.xml").absoluteString
                let without = try await CommandRunner.ferry(["podcast", "add", url], home: home)
                #expect(without.status != 0)
                #expect(without.stderr.contains("This feed needs a user name and password"), "\(without.stderr)")
                let wrong = try await CommandRunner.ferry(["podcast", "add", url, "--user", "me", "--password-stdin"], home: home, input: "wrong\n")
                #expect(wrong.stderr.contains("refused the user name and password"), "\(wrong.stderr)")
                let added = try await CommandRunner.ferry(["podcast", "add", url, "--user", "me", "--password-stdin"], home: home, input: "let me in\n")
                #expect(added.status == 0, "\(added)")
                #expect(added.stdout.contains("Subscribed to Private Show"))
                let list = try await CommandRunner.ferry(["podcast", "ls", "--json"], home: home)
                #expect(list.stdout.contains("\"user\" : \"me\"") && !list.stdout.contains("let me in"), "\(list.stdout)")
                let lonely = try await CommandRunner.ferry(["podcast", "add", url, "--password-stdin"], home: home, input: "x\n")
                #expect(lonely.status != 0 && lonely.stderr.contains("--password-stdin goes with --user NAME"))
            }
        }
    }
}
