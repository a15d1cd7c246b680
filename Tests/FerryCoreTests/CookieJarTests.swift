import FerryModel
import Foundation
import Testing

@testable import FerryCore

/// RFC 6265's rules as the jar applies them, and the cookies.txt format.
@Suite struct CookieJarTests {
    /// A jar that answers whether it took a cookie (`#expect` cannot call a mutating method).
    final class Jar {
        var jar = CookieJar()
        func take(_ header: String, from url: URL, now: Date) -> Bool { jar.receive(header, from: url, now: now) }
        func receive(_ header: String, from url: URL, now: Date) { jar.receive(header, from: url, now: now) }
        func header(for url: URL, now: Date, chainSite: String? = nil) -> String? { jar.header(for: url, now: now, chainSite: chainSite) }
        var cookies: [Cookie] { jar.cookies }
        func removeExpired(now: Date) { jar.removeExpired(now: now) }
    }

    let now = Date(timeIntervalSince1970: 1_800_000_000)
    func url(_ text: String) -> URL { URL(string: text)! }

    @Test func attributesAreParsedAsTheRFCSays() throws {
        let parsed = try #require(CookieJar.parse(" sid = a b c ; Path=/files; Domain=.Example.COM; Secure; HttpOnly; SameSite=Strict; Max-Age=60; Expires=Wed, 09 Jun 2021 10:18:14 GMT", now: now))
        #expect(parsed.name == "sid" && parsed.value == "a b c")
        #expect(parsed.path == "/files" && parsed.domain == ".example.com" && parsed.secure && parsed.httpOnly && parsed.sameSite == .strict)
        #expect(parsed.expires == now + 60, "Max-Age wins over Expires")
        #expect(CookieJar.parse("novalue", now: now) == nil, "no '=': ignored")
        #expect(CookieJar.parse("=x", now: now) == nil, "no name: ignored")
        #expect(CookieJar.parse("a=1; Path=relative", now: now)?.path == nil, "a path that is not absolute takes the default")
        #expect(CookieJar.parse("a=1; Max-Age=0", now: now)?.expires == .distantPast)
        #expect(CookieJar.parse("a=1; Max-Age=1e9", now: now)?.expires == nil, "not digits: ignored")
    }

    @Test(arguments: [
        ("Sun, 06 Nov 1994 08:49:37 GMT", 784_111_777.0),  // RFC 1123
        ("Sunday, 06-Nov-94 08:49:37 GMT", 784_111_777.0),  // RFC 850
        ("Sun Nov  6 08:49:37 1994", 784_111_777.0),  // asctime
        ("Thu, 01 Jan 2037 00:00:00 GMT", 2_114_380_800.0),
    ])
    func cookieDatesInTheFormsServersWrite(_ text: String, _ seconds: Double) {
        #expect(CookieJar.cookieDate(text) == Date(timeIntervalSince1970: seconds))
    }

    @Test func badDatesAreIgnored() {
        for text in ["", "tomorrow", "Sun, 32 Nov 1994 08:49:37 GMT", "Sun, 06 Nov 1994 25:49:37 GMT", "06 Nov 1994"] {
            #expect(CookieJar.cookieDate(text) == nil, "\(text)")
        }
    }

    @Test func domainsArePinnedToTheHostThatSetThem() {
        let jar = Jar()
        #expect(jar.take("a=1", from: url("https://www.example.com/x/y"), now: now) == true)
        #expect(jar.cookies[0].hostOnly && jar.cookies[0].domain == "www.example.com" && jar.cookies[0].path == "/x")
        #expect(jar.take("b=2; Domain=example.com", from: url("https://www.example.com/"), now: now) == true)
        #expect(jar.take("c=3; Domain=other.com", from: url("https://www.example.com/"), now: now) == false, "not a domain of the host")
        #expect(jar.take("d=4; Domain=com", from: url("https://example.com/"), now: now) == false, "a top-level name")
        #expect(jar.take("e=5; Domain=ample.com", from: url("https://example.com/"), now: now) == false, "a suffix is not a parent domain")
        #expect(jar.take("f=6; Domain=0.1", from: url("http://10.0.0.1/"), now: now) == false, "no domain of an address")

        #expect(jar.header(for: url("https://www.example.com/x/file"), now: now) == "a=1; b=2")
        #expect(jar.header(for: url("https://cdn.example.com/x/file"), now: now) == "b=2", "host-only stays on its host")
        #expect(jar.header(for: url("https://www.example.com/xy"), now: now) == "b=2", "/x is not a prefix path of /xy")
        #expect(jar.header(for: url("https://example.org/"), now: now) == nil)
    }

    @Test func secureCookiesNeedHTTPSAndPrefixesKeepTheirPromise() {
        let jar = Jar()
        #expect(jar.take("s=1; Secure", from: url("http://example.com/"), now: now) == false, "plain http cannot set a Secure cookie")
        #expect(jar.take("s=1; Secure", from: url("https://example.com/"), now: now) == true)
        #expect(jar.header(for: url("http://example.com/"), now: now) == nil, "never sent over plain http")
        #expect(jar.header(for: url("https://example.com/"), now: now) == "s=1")
        #expect(jar.take("__Secure-a=1", from: url("https://example.com/"), now: now) == false)
        #expect(jar.take("__Host-a=1; Secure; Domain=example.com", from: url("https://example.com/"), now: now) == false)
        #expect(jar.take("__Host-a=1; Secure; Path=/x", from: url("https://example.com/"), now: now) == false)
        #expect(jar.take("__Host-a=1; Secure; Path=/", from: url("https://example.com/"), now: now) == true)
    }

    @Test func expiryReplacementAndOrder() {
        let jar = Jar()
        jar.receive("a=1; Path=/", from: url("https://e.com/"), now: now)
        jar.receive("deep=2; Path=/a/b", from: url("https://e.com/"), now: now + 1)
        jar.receive("b=3; Max-Age=10", from: url("https://e.com/"), now: now + 2)
        #expect(jar.header(for: url("https://e.com/a/b/c"), now: now + 3) == "deep=2; a=1; b=3", "longest path first, then oldest")
        #expect(jar.header(for: url("https://e.com/a/b/c"), now: now + 20) == "deep=2; a=1", "expired: not sent")
        jar.receive("a=new", from: url("https://e.com/"), now: now + 5)
        #expect(jar.cookies.first { $0.name == "a" }?.value == "new" && jar.cookies.first { $0.name == "a" }?.created == now)
        jar.receive("a=gone; Expires=Thu, 01 Jan 1970 00:00:00 GMT", from: url("https://e.com/"), now: now + 6)
        #expect(!jar.cookies.contains { $0.name == "a" }, "an expiry in the past deletes it")
        jar.removeExpired(now: now + 20)
        #expect(jar.cookies.map(\.name) == ["deep"])
    }

    @Test func sameSiteStrictStaysWithinTheSiteTheChainBeganOn() {
        let jar = Jar()
        jar.receive("strict=1; SameSite=Strict", from: url("https://files.example.com/"), now: now)
        jar.receive("lax=1; SameSite=Lax", from: url("https://files.example.com/"), now: now)
        let target = url("https://files.example.com/f")
        #expect(jar.header(for: target, now: now, chainSite: "example.com") == "strict=1; lax=1")
        #expect(jar.header(for: target, now: now, chainSite: "elsewhere.org") == "lax=1", "a redirect from another site")
    }

    @Test func limitsKeepTheNewest() {
        let jar = Jar()
        for n in 0..<(CookieJar.maxPerDomain + 5) {
            jar.receive("c\(n)=1", from: url("https://e.com/"), now: now + Double(n))
        }
        #expect(jar.cookies.count == CookieJar.maxPerDomain)
        #expect(!jar.cookies.contains { $0.name == "c0" } && jar.cookies.contains { $0.name == "c54" })
        #expect(jar.take("big=\(String(repeating: "x", count: 5000))", from: url("https://e.com/"), now: now) == false)
    }

    @Test func cookiesFilesRoundTripAndBadLinesAreNamed() throws {
        let text = """
            # Netscape HTTP Cookie File
            .example.com\tTRUE\t/\tTRUE\t2000000000\tsid\tabc def
            #HttpOnly_files.example.com\tFALSE\t/dl\tFALSE\t0\ttoken\tx=y
            old.example.com\tFALSE\t/\tFALSE\t1000\tgone\t1

            """
        let cookies = try CookiesFile.parse(text, now: now)
        #expect(cookies.count == 2, "the expired one is left out")
        #expect(cookies[0] == Cookie(name: "sid", value: "abc def", domain: "example.com", hostOnly: false, path: "/",
                                     expires: Date(timeIntervalSince1970: 2_000_000_000), secure: true, created: now))
        #expect(cookies[1].httpOnly && cookies[1].hostOnly && cookies[1].expires == nil && cookies[1].value == "x=y")
        #expect(try CookiesFile.parse(CookiesFile.text(cookies), now: now) == cookies)

        for (line, says) in [
            ("example.com\tTRUE\t/\tTRUE\t2000000000", "7 tab-separated fields"),
            ("example.com\tYES\t/\tTRUE\t2000000000\ta\tb", "TRUE or FALSE"),
            ("example.com\tTRUE\t/\tTRUE\tsoon\ta\tb", "seconds since 1970"),
            ("example.com\tTRUE\tx\tTRUE\t0\ta\tb", "must begin with '/'"),
        ] {
            let error = #expect(throws: FerryError.self) { try CookiesFile.parse("# header\n" + line, now: now) }
            #expect(error?.message.contains("Line 2") == true && error?.message.contains(says) == true, "\(String(describing: error?.message))")
        }
    }
}
