// Compiled (not run) by test/types.test.mjs: typed attributes as an author uses them, with custom
// attributes of their own declared as a type, and the testing helpers. Must compile.
import { run, type IndexExtension, type SearchableIndex, type SearchableItem } from '../../dist/index.js';
import { RecordingIndex, reindexAll, reindexItems, type RecordedItem } from '../../dist/testing.js';

/** The custom attributes the manifest declares ("attributes": {"pages": {"type": "number"}, …}). */
interface BookAttributes {
  pages?: number;
  published?: Date | string;
  inPrint?: boolean;
  genres?: readonly string[];
  isbn?: string | null;
}

interface Book { id: string; title: string; pages: number; genres: string[] }

function toItem(book: Book): SearchableItem<BookAttributes> {
  return {
    uniqueIdentifier: `book.${book.id}`,
    attributes: { title: book.title, keywords: book.genres, rating: 4.5, custom: { pages: book.pages, genres: book.genres, inPrint: true } },
  };
}

class Books implements IndexExtension {
  async reindexAll(index: SearchableIndex): Promise<void> {
    const books: Book[] = [{ id: '1', title: 'Dune', pages: 412, genres: ['sf'] }];
    await index.put(books.map(toItem));
    await index.put(toItem(books[0]));
    // Without a declared type, any names with values of the declarable types.
    await index.put({ uniqueIdentifier: 'loose', attributes: { custom: { shelf: 'B2', floor: 3, tags: ['a'], seen: new Date(), gone: null } } });
    // A partial update removes with null.
    await index.put({ uniqueIdentifier: 'book.1', isUpdate: true, attributes: { rating: null, custom: { isbn: null } } });
  }

  async reindexItems(identifiers: string[], index: SearchableIndex): Promise<void> {
    await index.delete(identifiers);
  }
}

async function unitTest(): Promise<void> {
  const recording: RecordingIndex = await reindexAll(Books, { reason: 'retry', clientState: '2' });
  const first: RecordedItem | undefined = recording.puts[0];
  const pages: unknown = first?.attributes?.pages;
  const state: string | undefined = recording.commits[0]?.clientState;
  const completed: number | undefined = recording.progress[0]?.completed;
  const items: Map<string, RecordedItem> = recording.items();
  const again = await reindexItems(new Books(), ['book.1'], { recording: new RecordingIndex() });
  void [pages, state, completed, items, again.deletes, again.deletedDomains, again.deletedAll, again.allowEmpty, again.outcome];
}

void unitTest;
run(Books);
