import Foundation
import Testing

@testable import FerryFeeds

@Suite struct HTMLSanitizerTests {
    @Test(arguments: [
        // The allowlist is kept, attributes dropped.
        ("<p class=\"x\" style=\"color:red\">Hi</p>", "<p>Hi</p>"),
        ("<b>b</b><strong>s</strong><i>i</i><em>e</em><u>u</u><code>c</code>", "<b>b</b><strong>s</strong><i>i</i><em>e</em><u>u</u><code>c</code>"),
        ("<ul><li>one</li><li>two</li></ul><ol><li>x</li></ol>", "<ul><li>one</li><li>two</li></ul><ol><li>x</li></ol>"),
        ("<h1>A</h1><h6>F</h6><blockquote>q</blockquote><pre>p</pre>", "<h1>A</h1><h6>F</h6><blockquote>q</blockquote><pre>p</pre>"),
        ("a<br>b<br/>c<BR />d<hr>", "a<br>b<br>c<br>d<hr>"),
        ("<P>Upper</P>", "<p>Upper</p>"),
        // Links: http, https, mailto only, with rel.
        ("<a href=\"https://example.com/x?a=1&amp;b=2\">x</a>", "<a href=\"https://example.com/x?a=1&amp;b=2\" rel=\"noopener noreferrer\">x</a>"),
        ("<a href='http://example.com' target=_blank rel=opener>x</a>", "<a href=\"http://example.com\" rel=\"noopener noreferrer\">x</a>"),
        ("<a href=mailto:me@example.com>mail</a>", "<a href=\"mailto:me@example.com\" rel=\"noopener noreferrer\">mail</a>"),
        ("<a HREF=\"HTTPS://EXAMPLE.COM/\">x</a>", "<a href=\"HTTPS://EXAMPLE.COM/\" rel=\"noopener noreferrer\">x</a>"),
        ("<a href=\"https://example.com/a b\">x</a>", "<a href=\"https://example.com/a%20b\" rel=\"noopener noreferrer\">x</a>"),
        ("<a href=\"https://example.com/?q=&quot;&gt;\">x</a>", "<a href=\"https://example.com/?q=&quot;&gt;\" rel=\"noopener noreferrer\">x</a>"),
        ("<a href=\"javascript:alert(1)\">x</a>", "x"),
        ("<a href=\"JaVaScRiPt:alert(1)\">x</a>", "x"),
        ("<a href=\"jav&#x09;ascript:alert(1)\">x</a>", "x"),
        ("<a href=\"jav&#9;ascript:alert(1)\">x</a>", "x"),
        ("<a href=\"  javascript:alert(1)\">x</a>", "x"),
        ("<a href=\"java\nscript:alert(1)\">x</a>", "x"),
        ("<a href=\"&#106;avascript:alert(1)\">x</a>", "x"),
        ("<a href=\"data:text/html;base64,PHNjcmlwdD4=\">x</a>", "x"),
        ("<a href=\"vbscript:x\">x</a>", "x"),
        ("<a href=\"/relative\">x</a>", "x"),
        ("<a>no href</a>", "no href"),
        ("<a href=\"https://a\">one<a href=\"https://b\">two</a></a>", "<a href=\"https://a\" rel=\"noopener noreferrer\">one</a><a href=\"https://b\" rel=\"noopener noreferrer\">two</a>"),
        // Dropped with their content.
        ("a<script>alert(1)</script>b", "ab"),
        ("a<SCRIPT type=x>alert('</p>')</SCRIPT >b", "ab"),
        ("a<style>p{}</style>b", "ab"),
        ("a<iframe src=x>inside</iframe>b", "ab"),
        ("a<object data=x><param name=y><p>fallback</p></object>b", "ab"),
        ("a<svg><script>alert(1)</script><text>t</text></svg>b", "ab"),
        ("a<noscript><p>no</p></noscript>b", "ab"),
        ("a<script>never closed", "a"),
        // Images are tracking pixels; event handlers never survive.
        ("<img src=x onerror=alert(1)>", ""),
        ("<p onmouseover=\"alert(1)\">x</p>", "<p>x</p>"),
        ("<body onload=alert(1)>x</body>", "x"),
        // Split and nested tricks.
        ("<scr<script>ipt>alert(1)</script>", "ipt&gt;alert(1)"),
        ("<<script>script>alert(1)</script>", "&lt;"),
        ("<scr\nipt>alert(1)</scr\nipt>", "alert(1)"),
        ("<!--<script>alert(1)</script>-->ok", "ok"),
        ("<![CDATA[<script>alert(1)</script>]]>ok", "alert(1)]]&gt;ok"),  // A bogus comment, to the first `>`.
        ("<?php echo 1 ?>ok", "ok"),
        ("<div><span>a</span> <font color=red>b</font></div>", "a b"),
        // Unclosed and stray tags are balanced.
        ("<p><b>bold", "<p><b>bold</b></p>"),
        ("<blockquote>quote", "<blockquote>quote</blockquote>"),
        ("</p></blockquote>text</a>", "text"),
        ("<b><i>x</b>y</i>", "<b><i>x</i></b>y"),
        ("<p unclosed=\"", ""),
        ("text <b", "text "),
        // Text is escaped; entities decoded then escaped again.
        ("a < b > c & d", "a &lt; b &gt; c &amp; d"),
        ("&lt;script&gt;alert(1)&lt;/script&gt;", "&lt;script&gt;alert(1)&lt;/script&gt;"),
        ("caf&eacute; &amp; &#233;&#xE9; &nbsp;&hellip;&rsquo;", "café &amp; éé \u{A0}…’"),
        ("&bogus; &amp &#0; &#xD800;", "&amp;bogus; &amp;amp \u{FFFD} \u{FFFD}"),
        ("\"quotes\" 'stay'", "\"quotes\" 'stay'"),
    ])
    func sanitize(_ html: String, _ expected: String) {
        #expect(HTMLSanitizer.sanitize(html) == expected)
    }

    @Test func relativeLinksResolveAgainstABase() {
        let base = URL(string: "https://example.com/shows/ferry/feed.xml")!
        #expect(
            HTMLSanitizer.sanitize(#"<a href="../notes">n</a>"#, baseURL: base)
                == #"<a href="https://example.com/shows/notes" rel="noopener noreferrer">n</a>"#)
        #expect(
            HTMLSanitizer.sanitize(#"<a href="//cdn.example.net/x">n</a>"#, baseURL: base)
                == #"<a href="https://cdn.example.net/x" rel="noopener noreferrer">n</a>"#)
        #expect(HTMLSanitizer.sanitize(#"<a href="javascript:alert(1)">n</a>"#, baseURL: base) == "n")
    }

    @Test func deepNestingIsBounded() {
        let html = String(repeating: "<b>", count: 10_000) + "x"
        let sanitized = HTMLSanitizer.sanitize(html)
        #expect(sanitized == String(repeating: "<b>", count: 64) + "x" + String(repeating: "</b>", count: 64))
    }

    @Test(arguments: [
        ("<p>Hello <b>world</b>!</p>", "Hello world!"),
        ("<p>One</p><p>Two</p>", "One\n\nTwo"),
        ("Line 1<br>Line 2<br/><br>Line 3", "Line 1\nLine 2\nLine 3"),
        ("<ul><li>a</li><li>b</li></ul>after", "a\nb\n\nafter"),
        ("<h2>Title</h2>Body", "Title\n\nBody"),
        ("<div>a</div><div>b</div>", "a\nb"),
        ("  lots   of\n\n  space\t here  ", "lots of space here"),
        ("caf&eacute; &amp; &lt;tag&gt; &#8217; &nbsp;x", "café & <tag> ’ x"),
        ("a<script>alert(1)</script>b<style>.x{}</style>c", "abc"),
        ("<span>in</span><span>line</span>", "inline"),
        ("&lt;p&gt;escaped&lt;/p&gt;", "<p>escaped</p>"),
        ("Fish & Chips <3", "Fish & Chips <3"),
        ("", ""),
    ])
    func text(_ html: String, _ expected: String) {
        #expect(HTMLSanitizer.text(html) == expected)
    }

    @Test(arguments: [
        ("<p>x</p>", true), ("a</b>", true), ("<!-- c -->", true), ("&amp;", true), ("&#233;", true), ("&eacute;", true),
        ("Fish & Chips <3", false), ("a < b", false), ("&bogus;", false), ("AT&T", false), ("plain", false), ("", false),
    ])
    func looksLikeHTML(_ text: String, _ expected: Bool) {
        #expect(HTMLSanitizer.looksLikeHTML(text) == expected)
    }

    @Test func plainTextBecomesParagraphs() {
        #expect(HTMLSanitizer.html(fromPlainText: "  One <two>\n  three\n\n\nFour & five ") == "<p>One &lt;two&gt;<br>three</p><p>Four &amp; five</p>")
        #expect(HTMLSanitizer.tidy(plainText: "  One\n   two  words \r\n\n\n Three ") == "One\ntwo words\n\nThree")
        #expect(HTMLSanitizer.html(fromPlainText: " \n ") == "")
    }
}
