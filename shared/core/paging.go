package core

// Page is the paging part of every list tool's input.
type Page struct {
	Limit  int `json:"limit,omitempty" jsonschema:"How many items to return at most." schema:"minimum=1,maximum=500,default=50"`
	Offset int `json:"offset,omitempty" jsonschema:"How many items to skip." schema:"minimum=0,default=0"`
}

// page cuts one page out of items and reports the total.
func page[T any](items []T, p Page) (out []T, total int) {
	total = len(items)
	if p.Offset >= total {
		return []T{}, total
	}
	end := min(total, p.Offset+p.Limit)
	return items[p.Offset:end], total
}

// Paginate cuts one page out of items and reports the total.
func Paginate[T any](items []T, p Page) ([]T, int) { return page(items, p) }

// Paged is the shape of every paginated list.
type Paged[T any] struct {
	Coverage
	Items  []T    `json:"items"`
	Total  int    `json:"total"`
	Offset int    `json:"offset"`
	Limit  int    `json:"limit"`
	Hint   string `json:"hint,omitempty" jsonschema:"why the list is empty when the request may be mistaken (no such folder, a note named as a folder), and what to send instead"`
}
