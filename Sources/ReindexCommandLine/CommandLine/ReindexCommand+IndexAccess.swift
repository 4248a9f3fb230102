/// The commands that only read the index, in one place: they never create an index, so a
/// mistyped `--index` is an error naming the path instead of a new empty index that answers
/// "No items match" (cli.md, "The index path"). Every other command may create it.
extension SearchCommand { package static var onlyReadsIndex: Bool { true } }
extension ItemsCommand { package static var onlyReadsIndex: Bool { true } }
extension ShowCommand { package static var onlyReadsIndex: Bool { true } }
extension StatusCommand { package static var onlyReadsIndex: Bool { true } }
extension CheckCommand { package static var onlyReadsIndex: Bool { true } }
#if os(Linux)
extension DesktopCommand { package static var onlyReadsIndex: Bool { true } }
#endif
