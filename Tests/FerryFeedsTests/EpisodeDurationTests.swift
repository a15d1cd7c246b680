import Testing

@testable import FerryFeeds

@Suite struct EpisodeDurationTests {
    @Test(arguments: [
        ("1:02:03", 3723.0),
        ("01:02:03", 3723),
        ("00:45:00", 2700),
        ("10:00:00", 36000),
        ("45:00", 2700),
        ("5:07", 307),
        ("90:00", 5400),  // only the first part may pass 59
        ("3600", 3600),
        ("0", 0),
        ("95.5", 95.5),
        ("1:02:03.25", 3723.25),
        ("00:00:00.5", 0.5),
        ("  1:00  ", 60),
        ("\n3723\t", 3723),
    ])
    func parses(_ text: String, _ seconds: Double) {
        #expect(EpisodeDuration.parse(text) == seconds)
    }

    @Test(arguments: [
        "", " ", "garbage", "-5", "-1:00", "1:-2", "1::2", ":30", "30:", "1:2:3:4", "1:75", "1:30:60", "1.5:00",
        "1:02.5:03", "45 min", "1h", "PT1H", "1,5", "nan", "inf", "+5", "١٢", "1e3", ".", "1..5",
    ])
    func rejects(_ text: String) {
        #expect(EpisodeDuration.parse(text) == nil)
    }
}
