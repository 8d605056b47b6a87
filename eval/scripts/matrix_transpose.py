grid = [[1, 2, 3], [4, 5, 6]]
rows = len(grid)
cols = len(grid[0])
flipped = []
for c in range(cols):
    new_row = []
    for r in range(rows):
        new_row.append(grid[r][c])
    flipped.append(new_row)
print(flipped)
