import FerryCore
import LibFuzzerDriver

/// Any text as a `Content-Disposition` header: a name or nil, never a crash; and the name,
/// once sanitised, is one safe path component.
func fuzzContentDisposition(_ input: UnsafeRawBufferPointer) -> CInt {
    let text = String(decoding: input, as: UTF8.self)
    guard let raw = ContentDisposition.fileName(text) else { return 0 }
    precondition(!raw.isEmpty, "empty name returned")
    if let name = FileNamer.sanitize(raw) {
        // Bytes, not Characters: a mark can join a `/` or a dot into a larger Character.
        let unsafe = name.isEmpty || name.utf8.first == 0x2E || name.utf8.contains(0x2F) || name.utf8.contains(0x5C)  // `.` `/` `\`
        precondition(!unsafe, "unsafe name \(name.debugDescription)")
        precondition(name.utf8.count <= FileNamer.maxBytes, "name too long")
    }
    return 0
}

/// libFuzzer's entry points: the input callback, and the `main` that SwiftPM links in
/// (`FuzzContentDisposition_main`), which runs libFuzzer's driver.
@_cdecl("LLVMFuzzerTestOneInput")
func testOneInput(_ data: UnsafePointer<UInt8>?, _ size: Int) -> CInt {
    fuzzContentDisposition(UnsafeRawBufferPointer(start: data, count: size))
}

@_cdecl("FuzzContentDisposition_main")
func fuzzMain(_ argc: CInt, _ argv: UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>?) -> CInt {
    var argc = argc
    var argv = argv
    return LLVMFuzzerRunDriver(&argc, &argv, testOneInput)
}
