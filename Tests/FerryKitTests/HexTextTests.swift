import FerryKit
import Foundation
import Testing

/// One way of writing bytes as hexadecimal, for digests, tokens and ETags.
@Suite struct HexTextTests {
    @Test func bytesAreTwoLowercaseDigitsEach() {
        #expect([UInt8]().hexText == "")
        #expect([0x00, 0x0f, 0x10, 0xab, 0xff].hexText == "000f10abff")
        #expect(Data("Ferry".utf8).hexText == "4665727279")
        #expect((0...255).map(UInt8.init).hexText.count == 512)
    }
}
