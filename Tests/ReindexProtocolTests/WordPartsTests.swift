import XCTest
import ReindexProtocol

final class WordPartsTests: XCTestCase {
    /// The split as the Unicode tables define it, character by character: what the fast paths
    /// (ASCII text without a change of case, ASCII characters in other text) must agree with.
    private func reference(_ text: String) -> String? {
        var output = ""
        var changed = false
        var previous: Unicode.GeneralCategory? = nil
        for scalar in text.unicodeScalars {
            let category = scalar.properties.generalCategory
            if previous == .lowercaseLetter && category == .uppercaseLetter {
                output.append(" ")
                changed = true
            }
            previous = category
            output.unicodeScalars.append(scalar)
        }
        return changed ? output : nil
    }

    private func split(_ text: String) -> String? {
        var text = text
        return text.withUTF8 { WordParts.splitLine(UnsafeRawBufferPointer($0)) }.map { String(decoding: $0, as: UTF8.self) }
    }

    func testSplitsWhereALowercaseLetterMeetsAnUppercaseOne() {
        XCTAssertEqual(split("MyWindowController"), "My Window Controller")
        XCTAssertNil(split("plain words, no change"))
        XCTAssertNil(split("ALLCAPS and lower"))
        XCTAssertEqual(WordParts.expanded("iPhone"), "iPhone\ni Phone")
        XCTAssertEqual(WordParts.expanded("quiet"), "quiet")
    }

    func testTextWithOtherCharactersSplitsAsTheUnicodeTablesSay() {
        let texts = [
            "Zoë Müller 12", "Engineering · Staff Engineer · +1 555 12", "zoëMüller", "MüllerZoë", "straßeÖffnung",
            "ÉcoleNormale", "écoleNormale", "ǅungla", "aǅb", "日本語Text", "textΑλφα", "αβγΔέλτα", "ſS", "caféBar", "a\u{301}B",
            "emoji😀Face", "😀", "İstanbulIzmir", "ﬁnalOne", "mixed ASCIIAndÄpfel und äpfelBirnen",
        ]
        for text in texts {
            XCTAssertEqual(split(text), reference(text), text)
        }
    }
}
