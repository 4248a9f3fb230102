// The types an extension is written against: items and their attributes, the extension itself,
// and the options of `run()`.
export {};
