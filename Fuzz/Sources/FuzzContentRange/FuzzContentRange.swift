import FerryCore
import LibFuzzerDriver

/// Any text as a `Content-Range` header: nil, or a range that a resume can trust
/// (first ≤ last < total, nothing negative, `bytes */N` only with a total).
func fuzzContentRange(_ input: UnsafeRawBufferPointer) -> CInt {
    let text = String(decoding: input, as: UTF8.self)
    guard let parsed = ContentRange(text) else { return 0 }
    if let total = parsed.total { precondition(total >= 0, "negative total") }
    if let range = parsed.range {
        precondition(range.lowerBound >= 0 && range.lowerBound <= range.upperBound, "bad range \(range)")
        if let total = parsed.total { precondition(range.upperBound < total, "range \(range) past total \(total)") }
    } else {
        precondition(parsed.total != nil, "`bytes */*` accepted")
    }
    return 0
}

/// libFuzzer's entry points: the input callback, and the `main` that SwiftPM links in
/// (`FuzzContentRange_main`), which runs libFuzzer's driver.
@_cdecl("LLVMFuzzerTestOneInput")
func testOneInput(_ data: UnsafePointer<UInt8>?, _ size: Int) -> CInt {
    fuzzContentRange(UnsafeRawBufferPointer(start: data, count: size))
}

@_cdecl("FuzzContentRange_main")
func fuzzMain(_ argc: CInt, _ argv: UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>?) -> CInt {
    var argc = argc
    var argv = argv
    return LLVMFuzzerRunDriver(&argc, &argv, testOneInput)
}
