/** In-process schema store for tests and evaluation; ids count from 1 like a fresh registry. */
import { normalizeSchema, type SchemaStore, unknownSchema } from '../ports/schema-store.js';

export class MemorySchemaStore implements SchemaStore {
  private readonly byText = new Map<string, number>();
  private readonly byId = new Map<number, string>();

  async register(_subject: string, schema: string): Promise<number> {
    const text = normalizeSchema(schema);
    let id = this.byText.get(text);
    if (id === undefined) {
      id = this.byId.size + 1;
      this.byText.set(text, id);
      this.byId.set(id, text);
    }
    return id;
  }

  async schemaById(id: number): Promise<string> {
    const text = this.byId.get(id);
    if (text === undefined) throw unknownSchema(id);
    return text;
  }
}
